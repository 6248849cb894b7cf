/**
 * The status bar item that shows the running run's phase.
 *
 * It watches the server's `$/progress` reports (through the language client's
 * `handleWorkDoneProgress` middleware, so VS Code's own progress notification
 * keeps working), keeps a map of progress tokens to their title and latest
 * message, and shows the most recent active one. A click runs
 * `agentls.cancel`. When the last run ends, the item shows its outcome and
 * what it spent (tokens, and the price when the model has one in settings;
 * runSummary.ts) for a minute; a click then shows the run's trace.
 */
import * as vscode from "vscode";
import type { ProgressToken, WorkDoneProgressBegin, WorkDoneProgressEnd, WorkDoneProgressReport } from "vscode-languageclient/node";
import { endSummary } from "./runSummary";

/** The server names a run's progress token `agentls/<runId>`. */
const TOKEN_PREFIX = "agentls/";
/** How long a finished run's outcome and spend stay in the status bar. */
const FINISHED_SHOWN_MS = 60_000;

interface RunProgress {
  runId?: string;
  title: string;
  message?: string;
  percentage?: number;
}

export type ProgressValue = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

export class RunStatus implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly runs = new Map<ProgressToken, RunProgress>();
  private lastRunId: string | undefined;
  private finished: { title: string; message: string } | undefined;
  private finishedTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly cancelCommand: string,
    private readonly traceCommand = "agentls.showTrace",
  ) {
    this.item = vscode.window.createStatusBarItem("agentls.run", vscode.StatusBarAlignment.Left, 50);
    this.item.name = "agentls run";
    this.item.command = cancelCommand;
  }

  /** Feed one `$/progress` value; the status bar follows. */
  update(token: ProgressToken, value: ProgressValue): void {
    if (value.kind === "begin") {
      const runId = typeof token === "string" && token.startsWith(TOKEN_PREFIX) ? token.slice(TOKEN_PREFIX.length) : undefined;
      this.runs.set(token, { runId, title: value.title, message: value.message, percentage: value.percentage });
    } else if (value.kind === "report") {
      const run = this.runs.get(token) ?? { title: "agentls" };
      this.runs.set(token, {
        runId: run.runId,
        title: run.title,
        message: value.message ?? run.message,
        percentage: value.percentage ?? run.percentage,
      });
    } else {
      const run = this.runs.get(token);
      this.runs.delete(token);
      this.lastRunId = run?.runId ?? this.lastRunId; // a click on the finished run shows its trace
      this.finish(run?.title ?? "agentls", value.message ?? "");
    }
    this.render();
  }

  /** Keep a finished run's outcome and spend on show for a while. */
  private finish(title: string, message: string): void {
    this.finished = { title, message };
    if (this.finishedTimer !== undefined) {
      clearTimeout(this.finishedTimer);
    }
    this.finishedTimer = setTimeout(() => {
      this.finished = undefined;
      this.render();
    }, FINISHED_SHOWN_MS);
  }

  /** Remember the run a command started, so a click can name it. */
  started(runId: string | undefined): void {
    if (runId !== undefined) {
      this.lastRunId = runId;
    }
  }

  /** The run shown in the status bar (named by its progress token), else the last one started. */
  activeRunId(): string | undefined {
    const current = [...this.runs.values()].pop();
    return current?.runId ?? this.lastRunId;
  }

  /** The server went away: nothing runs any more. */
  clear(): void {
    this.runs.clear();
    this.finished = undefined;
    this.render();
  }

  dispose(): void {
    if (this.finishedTimer !== undefined) {
      clearTimeout(this.finishedTimer);
    }
    this.item.dispose();
  }

  private render(): void {
    const current = [...this.runs.values()].pop();
    if (current === undefined && this.finished !== undefined) {
      this.item.text = `$(check) agentls: ${endSummary(this.finished.message)}`;
      this.item.tooltip = `${this.finished.title}: ${this.finished.message}. Click to show the trace.`;
      this.item.command = this.traceCommand;
      this.item.show();
      return;
    }
    this.item.command = this.cancelCommand;
    if (current === undefined) {
      this.item.hide();
      return;
    }
    const percent = current.percentage === undefined ? "" : ` ${current.percentage}%`;
    const phase = current.message ? `: ${current.message}` : "";
    this.item.text = `$(sync~spin) ${current.title}${phase}${percent}`;
    this.item.tooltip = `agentls: ${current.title}${phase}. Click to cancel the run.`;
    this.item.show();
  }
}
