/**
 * The language client: starts the server over stdio (the command chosen by
 * serverCommand.ts: `agentls.serverCommand`, `agentls.python`, `agentls` on
 * PATH, then the Python extension's interpreter), passes the engine settings as
 * `initializationOptions`, answers `workspace/configuration` for the `agentls`
 * section, and restarts on demand.
 */
import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  DynamicFeature,
  ExecuteCommandRequest,
  LanguageClient,
  State,
  type ConfigurationParams,
  type LanguageClientOptions,
  type ServerOptions,
  type StaticFeature,
} from "vscode-languageclient/node";
import { resolveInterpreter } from "./interpreter";
import { chooseServerCommand } from "./serverCommand";
import {
  type ContributedSettings,
  SECTION,
  configuredPython,
  configuredServerCommand,
  engineSettings,
} from "./settings";
import type { RunStatus } from "./status";

/**
 * The language client without its ExecuteCommand feature: that feature registers a VS Code
 * command for each of the server's commands, and registering an id twice throws. The extension
 * registers every agentls command itself (commands.ts): the palette's, and those of the code
 * actions, some of which ask the user something first (the hint) before they reach the server.
 */
class AgentlsLanguageClient extends LanguageClient {
  override registerFeature(feature: StaticFeature | DynamicFeature<unknown>): void {
    if (DynamicFeature.is(feature) && feature.registrationType.method === ExecuteCommandRequest.method) {
      return;
    }
    super.registerFeature(feature);
  }
}

export class AgentlsServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient> | undefined;

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly settingKeys: ContributedSettings,
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

  /** Tell a running server that settings changed; it pulls them again (no restart, runs go on). */
  configurationChanged(): void {
    this.client?.sendNotification(DidChangeConfigurationNotification.type, { settings: null }).catch((error: unknown) => {
      this.output.warn(`agentls: sending the settings change failed: ${String(error)}`);
    });
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
    const scope = vscode.workspace.workspaceFolders?.[0]?.uri;
    const server = await chooseServerCommand({
      serverCommand: configuredServerCommand(scope),
      pythonIsSet: configuredPython(scope) !== undefined,
      interpreter: () => resolveInterpreter(scope),
    });
    const commandLine = [server.command, ...server.args].join(" ");
    this.output.info(`agentls: starting ${commandLine} (from ${server.source})`);
    const serverOptions: ServerOptions = {
      command: server.command,
      args: server.args,
      options: { cwd: scope?.fsPath },
    };
    const client = new AgentlsLanguageClient("agentls", "agentls", serverOptions, this.clientOptions());
    client.onDidChangeState((event) => {
      if (event.newState === State.Stopped) {
        this.status.clear();
      }
    });
    try {
      await client.start();
    } catch (error) {
      this.output.show(true);
      throw new Error(
        `agentls: the server did not start with ${commandLine} (${String(error)}); install agentls as a tool ` +
          "from a checkout (pipx install /path/to/agentls, or uv tool install /path/to/agentls) so that it is on PATH, " +
          "or set agentls.serverCommand",
      );
    }
    this.client = client;
    return client;
  }

  private clientOptions(): LanguageClientOptions {
    const status = this.status;
    const keys = this.settingKeys;
    const output = this.output;
    const reported = new Set<string>();
    const onIgnored = (key: string, scopes: string[]): void => {
      const text = `agentls: ${SECTION}.${key} is set in the ${scopes.join(" and ")} settings and ignored: it can be set in your user settings only (a repository may not choose the endpoint, key variable, sandbox or safety)`;
      if (!reported.has(text)) {
        reported.add(text);
        output.warn(text);
        void vscode.window.showWarningMessage(text);
      }
    };
    return {
      documentSelector: [
        { scheme: "file", language: "python" },
        { scheme: "untitled", language: "python" },
      ],
      outputChannel: this.output,
      initializationOptions: engineSettings(keys, undefined, onIgnored),
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
                ? engineSettings(keys, item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined, onIgnored)
                : (defaults[index] as unknown),
            );
          },
        },
      },
    };
  }
}
