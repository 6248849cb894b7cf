/**
 * The language client: starts `<python> -m lsp_server` over stdio, passes the
 * engine settings as `initializationOptions`, answers `workspace/configuration`
 * for the `agentls` section, and restarts on demand.
 */
import * as vscode from "vscode";
import {
  LanguageClient,
  State,
  type ConfigurationParams,
  type LanguageClientOptions,
  type ServerOptions,
} from "vscode-languageclient/node";
import { resolveInterpreter } from "./interpreter";
import { SECTION, engineSettings } from "./settings";
import type { RunStatus } from "./status";

export class AgentlsServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient> | undefined;

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly settingKeys: readonly string[],
    private readonly status: RunStatus,
  ) {}

  /** The running client, started on first use. */
  async ready(): Promise<LanguageClient> {
    if (this.client !== undefined) {
      return this.client;
    }
    this.starting ??= this.start().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /** Stop the server (if any) and start a fresh one with the current settings. */
  async restart(): Promise<void> {
    await this.stop();
    await this.ready();
  }

  async stop(): Promise<void> {
    const client = this.client ?? (await this.starting?.catch(() => undefined));
    this.client = undefined;
    this.status.clear();
    if (client !== undefined) {
      try {
        await client.stop(5000);
      } catch (error) {
        this.output.warn(`agentls: stopping the server failed: ${String(error)}`);
      }
    }
  }

  dispose(): void {
    void this.stop();
  }

  private async start(): Promise<LanguageClient> {
    const interpreter = await resolveInterpreter();
    const args = [...interpreter.args, "-m", "lsp_server"];
    this.output.info(`agentls: starting ${interpreter.command} ${args.join(" ")} (interpreter from ${interpreter.source})`);
    const serverOptions: ServerOptions = {
      command: interpreter.command,
      args,
      options: { cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath },
    };
    const client = new LanguageClient("agentls", "agentls", serverOptions, this.clientOptions());
    client.onDidChangeState((event) => {
      if (event.newState === State.Stopped) {
        this.status.clear();
      }
    });
    try {
      await client.start();
    } catch (error) {
      this.output.show(true);
      throw new Error(`agentls: the server did not start with ${interpreter.command} (${String(error)}); set agentls.python to an interpreter where agentls is installed`);
    }
    this.client = client;
    return client;
  }

  private clientOptions(): LanguageClientOptions {
    const status = this.status;
    const keys = this.settingKeys;
    return {
      documentSelector: [
        { scheme: "file", language: "python" },
        { scheme: "untitled", language: "python" },
      ],
      outputChannel: this.output,
      initializationOptions: engineSettings(keys),
      middleware: {
        handleWorkDoneProgress: (token, params, next) => {
          status.update(token, params);
          next(token, params);
        },
        workspace: {
          configuration: async (params: ConfigurationParams, token, next) => {
            const defaults = await next(params, token);
            if (!Array.isArray(defaults)) {
              return defaults;
            }
            return params.items.map((item, index) =>
              item.section === SECTION
                ? engineSettings(keys, item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined)
                : (defaults[index] as unknown),
            );
          },
        },
      },
    };
  }
}
