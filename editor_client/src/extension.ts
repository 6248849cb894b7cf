/**
 * agentls for VS Code: the composition root. Builds the output channel, the
 * status bar item, the language client and the palette commands. A settings
 * change reaches the running server (`workspace/didChangeConfiguration`, then it
 * pulls `workspace/configuration`), so runs in flight go on; only the settings
 * that choose the server process (settingsChange.ts) or a new Python
 * interpreter restart it. The output channel opens itself only when the
 * server fails to start.
 */
import * as vscode from "vscode";
import { Commands } from "./commands";
import { onInterpreterChange } from "./interpreter";
import { AgentlsServer } from "./server";
import { SECTION, configuredPython, contributedKeys } from "./settings";
import { reactionTo } from "./settingsChange";
import { RunStatus } from "./status";

let server: AgentlsServer | undefined;

function restartWithMessage(output: vscode.LogOutputChannel, reason: string): void {
  output.info(`agentls: ${reason}; restarting the server`);
  server?.restart().catch((error: unknown) => {
    void vscode.window.showErrorMessage(error instanceof Error ? error.message : String(error));
  });
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("agentls", { log: true });
  const status = new RunStatus("agentls.cancel");
  server = new AgentlsServer(output, contributedKeys(context.extension), status);
  context.subscriptions.push(output, status, server, ...new Commands(server, status).register());
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((event) => {
      const reaction = reactionTo((section) => event.affectsConfiguration(section), SECTION);
      if (reaction === "restart") {
        restartWithMessage(output, "the server command changed");
      } else if (reaction === "notify") {
        server?.configurationChanged();
      }
    }),
    await onInterpreterChange(() => {
      if (configuredPython() === undefined) {
        restartWithMessage(output, "the selected Python interpreter changed");
      }
    }),
  );
  try {
    await server.ready();
  } catch (error) {
    void vscode.window.showErrorMessage(error instanceof Error ? error.message : String(error));
  }
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
