/**
 * Which command starts the language server (no `vscode` import: plain Node, tested on its own).
 *
 * Order: the `agentls.serverCommand` setting, used as given; the interpreter
 * the user chose in `agentls.python`; `agentls` on PATH (the recommended
 * install, beside the project, from a checkout: `pipx install /path/to/agentls`
 * / `uv tool install /path/to/agentls`); the Python extension's selected interpreter, else `python3`. An
 * interpreter runs `-m agent_core serve --stdio`, so agentls must be
 * installed in it.
 */
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import * as path from "node:path";

export type ServerSource =
  | "agentls.serverCommand"
  | "agentls.python"
  | "agentls on PATH"
  | "python extension"
  | "default python3";

export interface ServerCommand {
  command: string;
  args: string[];
  source: ServerSource;
}

/** An interpreter command and where it came from (see interpreter.ts). */
export interface InterpreterChoice {
  command: string;
  args: string[];
  source: "setting" | "python extension" | "default";
}

export interface ServerCommandInputs {
  /** `agentls.serverCommand`: the full command line, when set. */
  serverCommand?: readonly string[];
  /** Whether `agentls.python` is set (an interpreter the user chose beats PATH). */
  pythonIsSet: boolean;
  /** The interpreter: `agentls.python`, else the Python extension's, else `python3`. */
  interpreter: () => Promise<InterpreterChoice>;
  /** PATH to search (default: this process's); PATHEXT and the platform, for Windows. */
  searchPath?: string;
  pathExt?: string;
  platform?: NodeJS.Platform;
}

export const SERVE_ARGS: readonly string[] = ["serve", "--stdio"];
const MODULE_ARGS: readonly string[] = ["-m", "agent_core", ...SERVE_ARGS];

async function isExecutableFile(candidate: string): Promise<boolean> {
  try {
    await access(candidate, constants.X_OK);
    return (await stat(candidate)).isFile();
  } catch {
    return false;
  }
}

/** The first `name` on the search path that is an executable file, as `which` finds it. */
export async function findOnPath(
  name: string,
  searchPath: string = process.env.PATH ?? "",
  platform: NodeJS.Platform = process.platform,
  pathExt: string = process.env.PATHEXT ?? ".EXE;.CMD;.BAT",
): Promise<string | undefined> {
  const delimiter = platform === "win32" ? ";" : ":";
  const suffixes = platform === "win32" ? ["", ...pathExt.split(";").filter((s) => s !== "")] : [""];
  for (const dir of searchPath.split(delimiter)) {
    if (dir === "") {
      continue;
    }
    for (const suffix of suffixes) {
      const candidate = path.join(dir, name + suffix);
      if (await isExecutableFile(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

function fromInterpreter(interpreter: InterpreterChoice): ServerCommand {
  const source: ServerSource =
    interpreter.source === "setting"
      ? "agentls.python"
      : interpreter.source === "python extension"
        ? "python extension"
        : "default python3";
  return { command: interpreter.command, args: [...interpreter.args, ...MODULE_ARGS], source };
}

/** The command that starts the server, by the order in this module's comment. */
export async function chooseServerCommand(inputs: ServerCommandInputs): Promise<ServerCommand> {
  const configured = (inputs.serverCommand ?? []).map((part) => part.trim()).filter((part) => part !== "");
  if (configured.length > 0) {
    return { command: configured[0], args: configured.slice(1), source: "agentls.serverCommand" };
  }
  if (inputs.pythonIsSet) {
    return fromInterpreter(await inputs.interpreter());
  }
  const onPath = await findOnPath("agentls", inputs.searchPath, inputs.platform, inputs.pathExt);
  if (onPath !== undefined) {
    return { command: onPath, args: [...SERVE_ARGS], source: "agentls on PATH" };
  }
  return fromInterpreter(await inputs.interpreter());
}
