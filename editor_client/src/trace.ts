/**
 * Show a run's trace: the server's `agentls.showTrace` answer (Markdown) goes
 * into an untitled Markdown document, opened in the Markdown preview (no
 * temporary file is left behind).
 */
import * as vscode from "vscode";

/** The Markdown text of a showTrace answer: a string, or an object with `markdown`/`value`. */
export function traceMarkdown(answer: unknown): string {
  if (typeof answer === "string") {
    return answer;
  }
  if (typeof answer === "object" && answer !== null) {
    for (const key of ["markdown", "value", "trace"]) {
      const value = (answer as Record<string, unknown>)[key];
      if (typeof value === "string") {
        return value;
      }
    }
  }
  return "_agentls returned no trace._\n";
}

export async function showTrace(answer: unknown): Promise<void> {
  const document = await vscode.workspace.openTextDocument({ language: "markdown", content: traceMarkdown(answer) });
  try {
    await vscode.commands.executeCommand("markdown.showPreview", document.uri);
  } catch {
    // Markdown preview unavailable (the built-in extension disabled): show the text itself.
    await vscode.window.showTextDocument(document, { preview: true });
  }
}
