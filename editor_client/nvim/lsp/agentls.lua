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
-- vim.lsp.buf.code_action(); the buffer also gets :AgentlsPlanAndFix, :AgentlsGenerateTests
-- (both take a range), :AgentlsRunTask {goal}, :AgentlsRunTests, :AgentlsCancel and
-- :AgentlsShowTrace.

local ROOT_MARKERS = { "pyproject.toml", ".agentls.toml", "setup.cfg", "setup.py", ".git" }

local last_run = {} -- client id -> the last run id it answered

-- workspace/executeCommand with one argument object; `on_result(result)` gets the answer.
local function execute(client, bufnr, command, argument, on_result)
  if next(argument) == nil then
    argument = vim.empty_dict() -- an empty Lua table would be sent as a JSON list
  end
  client:exec_cmd({ title = command, command = command, arguments = { argument } }, { bufnr = bufnr },
    function(err, result)
      if err then
        vim.notify("agentls: " .. command .. ": " .. err.message, vim.log.levels.ERROR)
      elseif on_result then
        on_result(result)
      end
    end)
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
  local function remember(result)
    if type(result) == "table" and result.runId then
      last_run[client.id] = result.runId
      vim.notify("agentls: started run " .. result.runId)
    end
  end
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
}
