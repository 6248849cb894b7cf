/**
 * The engine settings the client hands to the server.
 *
 * package.json's `contributes.configuration` is the one list of settings. The
 * client sends only the values a user actually set (user, workspace or folder
 * scope), nested the way the engine's settings model expects
 * (`agentls.sandbox.timeoutS` -> `{ sandbox: { timeoutS } }`), so values from
 * the workspace's `pyproject.toml` / `.agentls.toml` are not overridden by
 * editor defaults. Client-only settings (how to start the server) are never sent.
 * Settings declared `"scope": "machine"` (endpoints, key variables, the sandbox
 * backend, safety, ...) are sent from the user's own settings only; a workspace
 * or folder value for one is dropped and reported (settingsScope.ts).
 */
import * as vscode from "vscode";
import { chosenValue, userOnlyKeys } from "./settingsScope";

export const SECTION = "agentls";

/** Settings read by the client itself; the server's settings model rejects them. */
export const CLIENT_ONLY: readonly string[] = ["python", "serverCommand", "trace.server"];

export type SettingsTree = { [key: string]: unknown };

interface ConfigurationContribution {
  properties?: Record<string, unknown>;
}

/** The contributed settings: every key (without the `agentls.` prefix), and those read from user scope only. */
export interface ContributedSettings {
  keys: readonly string[];
  userOnly: ReadonlySet<string>;
}

/** Called for a user-only setting whose workspace or folder value was dropped. */
export type IgnoredReporter = (key: string, scopes: string[]) => void;

/** The settings contributed by this extension's package.json. */
export function contributedKeys(extension: vscode.Extension<unknown>): ContributedSettings {
  const packageJSON = extension.packageJSON as { contributes?: { configuration?: ConfigurationContribution } };
  const properties = packageJSON.contributes?.configuration?.properties ?? {};
  const prefix = `${SECTION}.`;
  const keys = Object.keys(properties)
    .filter((key) => key.startsWith(prefix))
    .map((key) => key.slice(prefix.length));
  return { keys, userOnly: new Set(userOnlyKeys(properties, prefix)) };
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

/**
 * The engine settings to send: explicitly set values only, client-only keys dropped, user-only keys from
 * the user's settings only (a workspace or folder value is reported to `onIgnored`, never sent).
 */
export function engineSettings(
  settings: ContributedSettings,
  scope?: vscode.ConfigurationScope,
  onIgnored?: IgnoredReporter,
): SettingsTree {
  const config = vscode.workspace.getConfiguration(SECTION, scope);
  const flat = new Map<string, unknown>();
  for (const key of settings.keys) {
    if (CLIENT_ONLY.includes(key)) {
      continue;
    }
    const { value, ignored } = chosenValue(config.inspect(key), settings.userOnly.has(key));
    if (ignored.length > 0) {
      onIgnored?.(key, ignored);
    }
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
