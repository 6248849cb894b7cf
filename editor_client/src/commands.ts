/**
 * The palette commands. Each builds the server command's argument from the
 * active editor (document uri, selection) and sends it with
 * `workspace/executeCommand`; run-starting commands return `{runId}`.
 */
import * as vscode from "vscode";
import { ExecuteCommandRequest, type LanguageClient } from "vscode-languageclient/node";
import type { AgentlsServer } from "./server";
import type { RunStatus } from "./status";
import { showReport } from "./report";
import { showTrace } from "./trace";

type CommandArgument = Record<string, unknown>;

interface EditorTarget {
  uri: string;
  range?: unknown;
}

/** Diagnostics touching the selection (or the cursor line), as "[source] line N: message" like the server's code action. */
function diagnosticsAt(editor: vscode.TextEditor): string[] {
  const selection = editor.selection;
  const area = selection.isEmpty ? editor.document.lineAt(selection.active.line).range : selection;
  return vscode.languages
    .getDiagnostics(editor.document.uri)
    .filter((diagnostic) => diagnostic.range.intersection(area) !== undefined)
    .map((diagnostic) => {
      const source = diagnostic.source ? `[${diagnostic.source}] ` : "";
      return `${source}line ${diagnostic.range.start.line + 1}: ${diagnostic.message}`;
    });
}

function editorTarget(client: LanguageClient, withRange: boolean): EditorTarget | undefined {
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined) {
    return undefined;
  }
  const target: EditorTarget = { uri: client.code2ProtocolConverter.asUri(editor.document.uri) };
  if (withRange && !editor.selection.isEmpty) {
    target.range = client.code2ProtocolConverter.asRange(editor.selection);
  }
  return target;
}

function runIdOf(result: unknown): string | undefined {
  if (typeof result === "object" && result !== null && "runId" in result) {
    const runId = result.runId;
    return typeof runId === "string" ? runId : undefined;
  }
  return undefined;
}

export class Commands {
  constructor(
    private readonly server: AgentlsServer,
    private readonly status: RunStatus,
  ) {}

  register(): vscode.Disposable[] {
    const table: [string, () => Promise<void>][] = [
      ["agentls.planAndFix", () => this.onEditor("agentls.planAndFix", true)],
      ["agentls.generateTests", () => this.onEditor("agentls.generateTests", false)],
      ["agentls.runTask", () => this.runTask()],
      ["agentls.runTests", () => this.runTests()],
      ["agentls.cancel", () => this.cancel()],
      ["agentls.showTrace", () => this.trace()],
      ["agentls.showReport", () => this.report()],
      ["agentls.restart", () => this.server.restart()],
    ];
    return table.map(([name, handler]) =>
      vscode.commands.registerCommand(name, async () => {
        try {
          await handler();
        } catch (error) {
          void vscode.window.showErrorMessage(error instanceof Error ? error.message : String(error));
        }
      }),
    );
  }

  private async execute(command: string, argument: CommandArgument): Promise<unknown> {
    const client = await this.server.ready();
    return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [argument] });
  }

  private async startRun(command: string, argument: CommandArgument): Promise<void> {
    const result = await this.execute(command, argument);
    this.status.started(runIdOf(result));
  }

  /** Plan and fix (with the diagnostics at the selection) or Generate tests on the active editor. */
  private async onEditor(command: string, withDiagnostics: boolean): Promise<void> {
    const client = await this.server.ready();
    const target = editorTarget(client, true);
    const editor = vscode.window.activeTextEditor;
    if (target === undefined || editor === undefined) {
      void vscode.window.showWarningMessage("agentls: open a Python file first.");
      return;
    }
    const diagnostics = withDiagnostics ? diagnosticsAt(editor) : [];
    await this.startRun(command, diagnostics.length > 0 ? { ...target, diagnostics } : { ...target });
  }

  private async runTask(): Promise<void> {
    const goal = await vscode.window.showInputBox({
      title: "agentls: Run task",
      prompt: "What should agentls do?",
      placeHolder: "e.g. add input validation to parse_config",
      ignoreFocusOut: true,
    });
    if (goal === undefined || goal.trim() === "") {
      return;
    }
    const client = await this.server.ready();
    await this.startRun("agentls.runTask", { goal: goal.trim(), ...editorTarget(client, true) });
  }

  private async runTests(): Promise<void> {
    const client = await this.server.ready();
    const target = editorTarget(client, false);
    await this.startRun("agentls.runTests", target === undefined ? {} : { uri: target.uri });
  }

  private async cancel(): Promise<void> {
    const runId = this.status.activeRunId();
    await this.execute("agentls.cancel", runId === undefined ? {} : { runId });
  }

  private async trace(): Promise<void> {
    const runId = this.status.activeRunId();
    const markdown = await this.execute("agentls.showTrace", runId === undefined ? {} : { runId });
    await showTrace(markdown);
  }

  private async report(): Promise<void> {
    const runId = this.status.activeRunId();
    const answer = await this.execute("agentls.showReport", runId === undefined ? {} : { runId });
    await showReport(answer);
  }
}
