/**
 * What a settings change does to the running server (no `vscode` import: plain Node, tested on its own).
 *
 * The server reads its engine settings again on `workspace/didChangeConfiguration`,
 * so a change to those only notifies it and runs in flight go on. The settings
 * that choose the server process itself need a new process: a restart.
 */

/** Settings (under `agentls.`) that pick the process that runs the server. */
export const SERVER_PROCESS_KEYS: readonly string[] = ["serverCommand", "python"];

export type SettingsReaction = "restart" | "notify" | "none";

/** The reaction to a change, given VS Code's `event.affectsConfiguration` (or any predicate on a section). */
export function reactionTo(affects: (section: string) => boolean, section = "agentls"): SettingsReaction {
  if (SERVER_PROCESS_KEYS.some((key) => affects(`${section}.${key}`))) {
    return "restart";
  }
  return affects(section) ? "notify" : "none";
}
