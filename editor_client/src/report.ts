/**
 * Show a run's HTML report: the server's `agentls.showReport` answer names the
 * page it wrote (`{runId, path, uri}`); the page opens in a webview beside the
 * editor, with an offer to open it in the browser instead. The webview runs no
 * script and loads nothing: the page is self-contained and works without its
 * script (folding is plain <details>).
 */
import * as fs from "node:fs/promises";
import * as vscode from "vscode";

interface ReportAnswer {
  runId?: string;
  path: string;
}

/** The report's path from a showReport answer, or undefined when the answer has none. */
export function reportAnswer(answer: unknown): ReportAnswer | undefined {
  if (typeof answer !== "object" || answer === null) {
    return undefined;
  }
  const { runId, path } = answer as Record<string, unknown>;
  if (typeof path !== "string" || path === "") {
    return undefined;
  }
  return { runId: typeof runId === "string" ? runId : undefined, path };
}

export async function showReport(answer: unknown): Promise<void> {
  const report = reportAnswer(answer);
  if (report === undefined) {
    void vscode.window.showWarningMessage("agentls: the server wrote no report.");
    return;
  }
  const panel = vscode.window.createWebviewPanel(
    "agentls.report",
    `agentls report ${report.runId ?? ""}`.trim(),
    vscode.ViewColumn.Beside,
    { enableScripts: false, localResourceRoots: [] },
  );
  panel.webview.html = await fs.readFile(report.path, "utf8");
  const choice = await vscode.window.showInformationMessage(
    `agentls: report of run ${report.runId ?? "(latest)"} written to ${report.path}`,
    "Open in browser",
  );
  if (choice === "Open in browser") {
    await vscode.env.openExternal(vscode.Uri.file(report.path));
  }
}
