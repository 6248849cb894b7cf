/**
 * The agentls commands, from the palette, the editor's context menu and the
 * server's code actions. From a code action a command gets the server's own
 * argument object and sends it on; from the palette or a menu it builds the
 * argument from the active editor (document uri, selection). Each is sent with
 * `workspace/executeCommand`; run-starting commands return `{runId}`.
 * "Plan and fix with a hint..." and "Retry with a hint..." ask the hint with an
 * input box first (the server cannot ask for text) and send it as `hint`.
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

/** A code action's argument object (the server's), or undefined when run from the palette or a menu. */
function given(argument: unknown): CommandArgument | undefined {
  return typeof argument === "object" && argument !== null && !(argument instanceof vscode.Uri)
    ? (argument as CommandArgument)
    : undefined;
}

async function askHint(): Promise<string | undefined> {
  const hint = await vscode.window.showInputBox({
    title: "agentls: hint",
    prompt: "Steer the planner and coder: where the bug is, what not to touch",
    placeHolder: "e.g. the off-by-one is in the loop bound of count_up",
    ignoreFocusOut: true,
  });
  return hint === undefined || hint.trim() === "" ? undefined : hint.trim();
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
    const table: [string, (argument?: CommandArgument) => Promise<void>][] = [
      ["agentls.planAndFix", (a) => this.onEditor("agentls.planAndFix", true, a)],
      ["agentls.planAndFixWithHint", (a) => this.withHint(a)],
      ["agentls.retryWithHint", (a) => this.retryWithHint(a)],
      ["agentls.generateTests", (a) => this.onEditor("agentls.generateTests", false, a)],
      ["agentls.runTask", () => this.runTask()],
      ["agentls.runTests", (a) => this.runTests(a)],
      ["agentls.cancel", () => this.cancel()],
      ["agentls.showTrace", () => this.trace()],
      ["agentls.showReport", () => this.report()],
      ["agentls.restart", () => this.server.restart()],
      ["agentls.applyVerifiedFix", (a) => this.passOn("agentls.applyVerifiedFix", a)],
      ["agentls.applyRunFix", (a) => this.passOn("agentls.applyRunFix", a)],
    ];
    return table.map(([name, handler]) =>
      vscode.commands.registerCommand(name, async (argument?: unknown) => {
        try {
          await handler(given(argument));
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

  /** A code action's command that needs nothing from the user: its argument goes to the server as it is. */
  private async passOn(command: string, argument: CommandArgument | undefined): Promise<void> {
    await this.execute(command, argument ?? {});
  }

  /** Plan and fix (with the diagnostics at the selection) or Generate tests: a code action's argument, else the active editor's. */
  private async onEditor(command: string, withDiagnostics: boolean, argument?: CommandArgument): Promise<void> {
    const target = argument ?? (await this.editorArgument(withDiagnostics));
    if (target !== undefined) {
      await this.startRun(command, target);
    }
  }

  /** "Plan and fix with a hint...": the code action's argument (else the active editor's), plus the hint asked now. */
  private async withHint(argument?: CommandArgument): Promise<void> {
    const target = argument ?? (await this.editorArgument(true));
    const hint = target === undefined ? undefined : await askHint();
    if (target !== undefined && hint !== undefined) {
      await this.startRun("agentls.planAndFixWithHint", { ...target, hint });
    }
  }

  /** "Retry with a hint...": the failed run of the code action (else the last run), again with the hint asked now. */
  private async retryWithHint(argument?: CommandArgument): Promise<void> {
    const runId = argument?.runId ?? this.status.activeRunId();
    if (runId === undefined) {
      void vscode.window.showWarningMessage("agentls: no run to retry yet.");
      return;
    }
    const hint = await askHint();
    if (hint !== undefined) {
      await this.startRun("agentls.retryWithHint", { runId, hint });
    }
  }

  private async editorArgument(withDiagnostics: boolean): Promise<CommandArgument | undefined> {
    const client = await this.server.ready();
    const target = editorTarget(client, true);
    const editor = vscode.window.activeTextEditor;
    if (target === undefined || editor === undefined) {
      void vscode.window.showWarningMessage("agentls: open a Python file first.");
      return undefined;
    }
    const diagnostics = withDiagnostics ? diagnosticsAt(editor) : [];
    return diagnostics.length > 0 ? { ...target, diagnostics } : { ...target };
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

  private async runTests(argument?: CommandArgument): Promise<void> {
    if (argument !== undefined) {
      await this.startRun("agentls.runTests", argument);
      return;
    }
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
