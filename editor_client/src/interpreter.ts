/**
 * Which Python runs the language server.
 *
 * Order: the `agentls.python` setting, then the interpreter selected in the
 * Python extension (ms-python.python; its `environments` API, else the older
 * `settings.getExecutionDetails`), then `python3`. The Python extension is
 * optional: every access to its API is guarded.
 */
import * as vscode from "vscode";
import { configuredPython } from "./settings";

const PYTHON_EXTENSION = "ms-python.python";
const FALLBACK = "python3";

/** The parts of the Python extension's API this client uses (all optional). */
interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath?: (resource?: vscode.Uri) => { path?: string } | undefined;
    resolveEnvironment?: (
      env: { path?: string } | string,
    ) => Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
    onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
  };
  settings?: {
    getExecutionDetails?: (resource?: vscode.Uri) => { execCommand?: string[] } | undefined;
  };
}

export interface Interpreter {
  command: string;
  args: string[];
  source: "setting" | "python extension" | "default";
}

async function pythonApi(): Promise<PythonExtensionApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION);
  if (extension === undefined) {
    return undefined;
  }
  try {
    return extension.isActive ? extension.exports : await extension.activate();
  } catch {
    return undefined;
  }
}

async function fromEnvironments(api: PythonExtensionApi, resource?: vscode.Uri): Promise<string[] | undefined> {
  const environments = api.environments;
  if (!environments?.getActiveEnvironmentPath || !environments.resolveEnvironment) {
    return undefined;
  }
  const active = environments.getActiveEnvironmentPath(resource);
  if (!active?.path) {
    return undefined;
  }
  const resolved = await environments.resolveEnvironment(active);
  const executable = resolved?.executable?.uri?.fsPath;
  return executable ? [executable] : undefined;
}

function fromExecutionDetails(api: PythonExtensionApi, resource?: vscode.Uri): string[] | undefined {
  const command = api.settings?.getExecutionDetails?.(resource)?.execCommand;
  return command && command.length > 0 ? [...command] : undefined;
}

/** The interpreter command for `resource` (the first workspace folder when omitted). */
export async function resolveInterpreter(resource?: vscode.Uri): Promise<Interpreter> {
  const scope = resource ?? vscode.workspace.workspaceFolders?.[0]?.uri;
  const configured = configuredPython(scope);
  if (configured !== undefined) {
    return { command: configured, args: [], source: "setting" };
  }
  const api = await pythonApi();
  if (api !== undefined) {
    try {
      const command = (await fromEnvironments(api, scope)) ?? fromExecutionDetails(api, scope);
      if (command !== undefined) {
        return { command: command[0], args: command.slice(1), source: "python extension" };
      }
    } catch {
      // An older or failing Python extension: fall through to the default.
    }
  }
  return { command: FALLBACK, args: [], source: "default" };
}

/** Fires when the Python extension's selected interpreter changes (never, without the extension). */
export async function onInterpreterChange(listener: () => void): Promise<vscode.Disposable> {
  const api = await pythonApi();
  const event = api?.environments?.onDidChangeActiveEnvironmentPath;
  return event ? event(() => listener()) : new vscode.Disposable(() => undefined);
}
