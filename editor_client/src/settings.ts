/**
 * The engine settings the client hands to the server.
 *
 * package.json's `contributes.configuration` is the one list of settings. The
 * client sends only the values a user actually set (user, workspace or folder
 * scope), nested the way the engine's settings model expects
 * (`agentls.sandbox.timeoutS` -> `{ sandbox: { timeoutS } }`), so values from
 * the workspace's `pyproject.toml` / `.agentls.toml` are not overridden by
 * editor defaults. Client-only settings (how to start the server) are never sent.
 */
import * as vscode from "vscode";

export const SECTION = "agentls";

/** Settings read by the client itself; the server's settings model rejects them. */
export const CLIENT_ONLY: readonly string[] = ["python", "serverCommand"];

export type SettingsTree = { [key: string]: unknown };

interface ConfigurationContribution {
  properties?: Record<string, unknown>;
}

/** The setting keys (without the `agentls.` prefix) contributed by this extension's package.json. */
export function contributedKeys(extension: vscode.Extension<unknown>): string[] {
  const packageJSON = extension.packageJSON as { contributes?: { configuration?: ConfigurationContribution } };
  const properties = packageJSON.contributes?.configuration?.properties ?? {};
  const prefix = `${SECTION}.`;
  return Object.keys(properties)
    .filter((key) => key.startsWith(prefix))
    .map((key) => key.slice(prefix.length));
}

/** `{"sandbox.timeoutS": 5}` -> `{sandbox: {timeoutS: 5}}`. */
export function nest(flat: ReadonlyMap<string, unknown>): SettingsTree {
  const tree: SettingsTree = {};
  for (const [dotted, value] of flat) {
    const parts = dotted.split(".");
    let node = tree;
    for (const part of parts.slice(0, -1)) {
      const child = node[part];
      if (typeof child !== "object" || child === null) {
        node[part] = {};
      }
      node = node[part] as SettingsTree;
    }
    node[parts[parts.length - 1]] = value;
  }
  return tree;
}

/** The value a user set for `key`, most specific scope first; undefined when only the default applies. */
function explicitValue(config: vscode.WorkspaceConfiguration, key: string): unknown {
  const info = config.inspect(key);
  if (info === undefined) {
    return undefined;
  }
  return info.workspaceFolderValue ?? info.workspaceValue ?? info.globalValue;
}

/** The engine settings to send: explicitly set values only, client-only keys dropped. */
export function engineSettings(keys: readonly string[], scope?: vscode.ConfigurationScope): SettingsTree {
  const config = vscode.workspace.getConfiguration(SECTION, scope);
  const flat = new Map<string, unknown>();
  for (const key of keys) {
    if (CLIENT_ONLY.includes(key)) {
      continue;
    }
    const value = explicitValue(config, key);
    if (value !== undefined && value !== null) {
      flat.set(key, value);
    }
  }
  return nest(flat);
}

/** The `agentls.python` setting, when set to a non-empty string. */
export function configuredPython(scope?: vscode.ConfigurationScope): string | undefined {
  const value = vscode.workspace.getConfiguration(SECTION, scope).get<string | null>("python");
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

/** The `agentls.serverCommand` setting (the server's full command line), when set to a non-empty list. */
export function configuredServerCommand(scope?: vscode.ConfigurationScope): string[] | undefined {
  const value = vscode.workspace.getConfiguration(SECTION, scope).get<unknown>("serverCommand");
  if (!Array.isArray(value)) {
    return undefined;
  }
  const parts = value.filter((part): part is string => typeof part === "string" && part.trim() !== "");
  return parts.length > 0 ? parts : undefined;
}
