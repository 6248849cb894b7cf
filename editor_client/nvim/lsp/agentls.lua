-- agentls for Neovim 0.11+: a native LSP config for vim.lsp.config / vim.lsp.enable (no plugins).
--
-- Install: copy this file to ~/.config/nvim/lsp/agentls.lua (or put editor_client/nvim on
-- 'runtimepath'), then in init.lua:
--
--   vim.lsp.config("agentls", {                 -- optional: only what you change
--     settings = {
--       agentls = {                             -- same names as the VS Code settings, without "agentls."
--         baseUrl = "http://127.0.0.1:8080/v1",
--         model = "qwen2.5-coder-1.5b",
--         sandbox = { timeoutS = 120 },
--       },
--     },
--   })
--   vim.lsp.enable("agentls")
--
-- The server is `agentls serve --stdio` from PATH: install agentls as a tool, beside your
-- project rather than inside it (from a checkout: `pipx install /path/to/agentls`). To use
-- an interpreter where agentls is installed instead:
--   vim.lsp.config("agentls", { cmd = { "/path/to/python", "-m", "agent_core", "serve", "--stdio" } })
--
-- The workspace root is the nearest directory above the buffer holding one of `root_markers`
-- (found with vim.fs.root), else the buffer's own directory: one server per project.
-- `settings.agentls` answers the server's workspace/configuration requests and is also sent as
-- initializationOptions. Code actions (Plan and fix, Generate tests) come through
-- vim.lsp.buf.code_action(); "Plan and fix with a hint..." and "Retry with a hint..." (on the
-- failing tests of a run that did not fix them) ask the hint with vim.ui.input first. The buffer
-- also gets :AgentlsPlanAndFix, :AgentlsPlanAndFixWithHint [hint], :AgentlsGenerateTests (these
-- take a range), :AgentlsRunTask {goal}, :AgentlsRunTests, :AgentlsCancel, :AgentlsShowTrace and
-- :AgentlsShowReport (the run's HTML report, opened with vim.ui.open).

local ROOT_MARKERS = { "pyproject.toml", ".agentls.toml", "setup.cfg", "setup.py", ".git" }

local last_run = {} -- client id -> the last run id it answered

-- workspace/executeCommand with one argument object; `on_result(result)` gets the answer.
-- A request, not client:exec_cmd: that would run the hint commands' own handlers below again.
local function execute(client, bufnr, command, argument, on_result)
  if next(argument) == nil then
    argument = vim.empty_dict() -- an empty Lua table would be sent as a JSON list
  end
  client:request("workspace/executeCommand", { command = command, arguments = { argument } },
    function(err, result)
      if err then
        vim.notify("agentls: " .. command .. ": " .. err.message, vim.log.levels.ERROR)
      elseif on_result then
        on_result(result)
      end
    end, bufnr)
end

local function remember_for(client)
  return function(result)
    if type(result) == "table" and result.runId then
      last_run[client.id] = result.runId
      vim.notify("agentls: started run " .. result.runId)
    end
  end
end

-- Ask the user's hint (vim.ui.input), then call `with(hint)`; nothing when it is cancelled or blank.
local function ask_hint(with)
  vim.ui.input({ prompt = "agentls hint (where the bug is, what not to touch): " }, function(hint)
    if hint ~= nil and vim.trim(hint) ~= "" then
      with(vim.trim(hint))
    end
  end)
end

-- The code actions "Plan and fix with a hint..." and "Retry with a hint...": the server cannot ask
-- for text, so the client asks and sends the same command with `hint` added.
local function with_hint(command, ctx)
  local client = assert(vim.lsp.get_client_by_id(ctx.client_id))
  local argument = vim.deepcopy((command.arguments or {})[1] or {})
  ask_hint(function(hint)
    argument.hint = hint
    execute(client, ctx.bufnr, command.command, argument, remember_for(client))
  end)
end

local function show_report(result)
  local path = type(result) == "table" and result.path
  if not path then
    vim.notify("agentls: the server wrote no report", vim.log.levels.WARN)
    return
  end
  vim.notify("agentls: report of run " .. tostring(result.runId) .. ": " .. path)
  vim.ui.open(path)
end

local function target(bufnr, opts)
  local arg = { uri = vim.uri_from_bufnr(bufnr) }
  if opts and opts.range and opts.range > 0 then
    arg.range = { start = { line = opts.line1 - 1, character = 0 }, ["end"] = { line = opts.line2, character = 0 } }
  end
  return arg
end

local function show_trace(result)
  local text = type(result) == "table" and result.markdown or result
  vim.cmd("new")
  vim.bo.buftype, vim.bo.bufhidden, vim.bo.filetype = "nofile", "wipe", "markdown"
  vim.api.nvim_buf_set_lines(0, 0, -1, false, vim.split(tostring(text or ""), "\n", { plain = true }))
end

local function define_commands(client, bufnr)
  local remember = remember_for(client)
  local function run(command, argument, on_result)
    execute(client, bufnr, command, argument, on_result)
  end
  local create = function(name, fn, opts) vim.api.nvim_buf_create_user_command(bufnr, name, fn, opts) end
  create("AgentlsPlanAndFix", function(o) run("agentls.planAndFix", target(bufnr, o), remember) end, { range = true })
  create("AgentlsGenerateTests", function(o) run("agentls.generateTests", target(bufnr, o), remember) end,
    { range = true })
  create("AgentlsRunTask", function(o)
    local arg = target(bufnr, o)
    arg.goal = o.args
    run("agentls.runTask", arg, remember)
  end, { nargs = "+", range = true })
  create("AgentlsRunTests", function() run("agentls.runTests", {}, remember) end, {})
  create("AgentlsCancel", function() run("agentls.cancel", { runId = last_run[client.id] }) end, {})
  create("AgentlsShowTrace", function() run("agentls.showTrace", { runId = last_run[client.id] }, show_trace) end, {})
  create("AgentlsShowReport", function() run("agentls.showReport", { runId = last_run[client.id] }, show_report) end,
    {})
  create("AgentlsPlanAndFixWithHint", function(o)
    local arg = target(bufnr, o)
    local function go(hint)
      arg.hint = hint
      run("agentls.planAndFixWithHint", arg, remember)
    end
    if vim.trim(o.args) ~= "" then go(vim.trim(o.args)) else ask_hint(go) end
  end, { nargs = "*", range = true })
end

---@type vim.lsp.Config
return {
  cmd = { "agentls", "serve", "--stdio" },
  filetypes = { "python" },
  root_markers = ROOT_MARKERS,
  root_dir = function(bufnr, on_dir)
    local markers = (vim.lsp.config.agentls or {}).root_markers or ROOT_MARKERS -- yours, if you changed them
    local name = vim.api.nvim_buf_get_name(bufnr)
    on_dir(vim.fs.root(bufnr, markers) or (name ~= "" and vim.fs.dirname(name)) or vim.fn.getcwd())
  end,
  settings = { agentls = {} },
  before_init = function(params, config)
    params.initializationOptions = (config.settings or {}).agentls or vim.empty_dict()
  end,
  on_attach = define_commands,
  commands = { -- the client's own handlers of these code actions' commands
    ["agentls.planAndFixWithHint"] = with_hint,
    ["agentls.retryWithHint"] = with_hint,
  },
}
