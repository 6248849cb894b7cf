/**
 * Which scope a setting's value may come from (no `vscode` import: plain Node, tested on its own).
 *
 * A repository is not trusted (docs/configuration.md, "Trust boundary"): the
 * settings that choose an endpoint, the variable a key is read from, the
 * sandbox backend, the safety level, or that run code or send data unasked are
 * declared `"scope": "machine"` in package.json (the engine's TRUSTED_ONLY list,
 * kept equal by a test), and the client sends them from the user's own
 * settings only: a value in a workspace's `.vscode/settings.json` or a folder's
 * settings is dropped and reported, never sent.
 */

/** Scopes whose settings VS Code itself accepts only from the user's (or a remote machine's) settings. */
export const USER_ONLY_SCOPES: readonly string[] = ["machine", "application"];

/** The part of `WorkspaceConfiguration.inspect()` this module reads. */
export interface ScopedValues {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

export interface ChosenValue {
  /** The value to send; undefined when only the default applies. */
  value: unknown;
  /** The scopes whose value was dropped because the setting is user-only. */
  ignored: string[];
}

/** Keys (without `prefix`) of the contributed settings whose scope is user-only. */
export function userOnlyKeys(properties: Record<string, unknown>, prefix: string): string[] {
  return Object.entries(properties)
    .filter(([key, prop]) => key.startsWith(prefix) && isUserOnly(prop))
    .map(([key]) => key.slice(prefix.length));
}

function isUserOnly(prop: unknown): boolean {
  const scope = (prop as { scope?: unknown } | null)?.scope;
  return typeof scope === "string" && USER_ONLY_SCOPES.includes(scope);
}

/** The value a user set, most specific scope first; for a user-only setting, the user's own value only. */
export function chosenValue(info: ScopedValues | undefined, userOnly: boolean): ChosenValue {
  if (info === undefined) {
    return { value: undefined, ignored: [] };
  }
  if (!userOnly) {
    return { value: info.workspaceFolderValue ?? info.workspaceValue ?? info.globalValue, ignored: [] };
  }
  const ignored: string[] = [];
  if (info.workspaceFolderValue !== undefined && info.workspaceFolderValue !== null) {
    ignored.push("folder");
  }
  if (info.workspaceValue !== undefined && info.workspaceValue !== null) {
    ignored.push("workspace");
  }
  return { value: info.globalValue, ignored };
}
