/**
 * Which Python runs the language server.
 *
 * Order: the `agentls.python` setting, then the interpreter selected in the
 * Python extension (ms-python.python, through its published API facade
 * `@vscode/python-extension`: the `environments` API), then `python3`. The
 * Python extension is optional: without it (or when its API fails) the
 * default applies.
 */
import { PythonExtension } from "@vscode/python-extension";
import * as vscode from "vscode";
import { configuredPython } from "./settings";

const FALLBACK = "python3";

export interface Interpreter {
  command: string;
  args: string[];
  source: "setting" | "python extension" | "default";
}

/** The Python extension's API, activating it if needed; undefined when it is not installed or fails. */
async function pythonApi(): Promise<PythonExtension | undefined> {
  try {
    return await PythonExtension.api();
  } catch {
    return undefined;
  }
}

/** The executable of the environment the Python extension has selected for `resource`. */
async function selectedExecutable(api: PythonExtension, resource?: vscode.Uri): Promise<string | undefined> {
  const active = api.environments.getActiveEnvironmentPath(resource);
  const resolved = await api.environments.resolveEnvironment(active);
  return resolved?.executable.uri?.fsPath;
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
      const executable = await selectedExecutable(api, scope);
      if (executable) {
        return { command: executable, args: [], source: "python extension" };
      }
    } catch {
      // A failing Python extension: fall through to the default.
    }
  }
  return { command: FALLBACK, args: [], source: "default" };
}

/** Fires when the Python extension's selected interpreter changes (never, without the extension). */
export async function onInterpreterChange(listener: () => void): Promise<vscode.Disposable> {
  const api = await pythonApi();
  try {
    if (api !== undefined) {
      return api.environments.onDidChangeActiveEnvironmentPath(() => listener());
    }
  } catch {
    // A failing Python extension: no event.
  }
  return new vscode.Disposable(() => undefined);
}
