-- agentls for Neovim 0.7 to 0.10 (built-in LSP client, no plugins needed).
-- On Neovim 0.11+ use lsp/agentls.lua beside this file instead (vim.lsp.config / vim.lsp.enable).
--
-- Starts the server for every Python buffer, one server per project root: `agentls serve --stdio`
-- when `agentls` is on PATH (installed as a tool from a checkout: `pipx install /path/to/agentls`),
-- else `python3 -m lsp_server` (agentls installed in that interpreter). It adds
-- :AgentlsPlanAndFix, :AgentlsPlanAndFixWithHint [hint], :AgentlsGenerateTests,
-- :AgentlsRunTask {goal}, :AgentlsRunTests, :AgentlsCancel, :AgentlsShowTrace and
-- :AgentlsShowReport (the run's HTML report, opened with vim.ui.open where Neovim has it, 0.10+,
-- else its path is shown). Code actions (Plan and fix, Generate tests) come through
-- `vim.lsp.buf.code_action()`; "Plan and fix with a hint..." and "Retry with a hint..." (on the
-- failing tests of a run that did not fix them) ask the hint with `vim.ui.input` first. Where Neovim has the current API (vim.lsp.start, 0.8;
-- vim.lsp.get_clients, 0.10) it is used; 0.7's calls only where they are the only ones.
--
-- Install: copy this file to ~/.config/nvim/lua/agentls.lua, then in init.lua:
--
--   require("agentls").setup({
--     cmd = { "agentls", "serve", "--stdio" },     -- or { "/path/to/venv/bin/python", "-m", "lsp_server" }
--     settings = {                                 -- same names as the VS Code settings, without "agentls."
--       baseUrl = "http://127.0.0.1:8080/v1",
--       model = "qwen2.5-coder-1.5b",
--       apiKeyEnv = "AGENTLS_API_KEY",             -- the NAME of the variable holding the key
--       roles = { coder = { model = "qwen2.5-coder-7b" } },
--       sandbox = { backend = "bubblewrap", timeoutS = 120 },
--     },
--   })
--
-- The settings go to the server as initializationOptions and answer its
-- workspace/configuration requests for the "agentls" section.

local M = {}

M.defaults = {
  cmd = vim.fn.executable("agentls") == 1 and { "agentls", "serve", "--stdio" } or { "python3", "-m", "lsp_server" },
  settings = {},
  root_markers = { "pyproject.toml", ".agentls.toml", "setup.cfg", "setup.py", ".git" },
}

local options = vim.deepcopy(M.defaults)
local client_by_root = {}

-- The nearest directory above the buffer holding one of the markers, else the current directory.
local function find_root(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local start = name ~= "" and vim.fn.fnamemodify(name, ":p:h") or vim.fn.getcwd()
  for _, marker in ipairs(options.root_markers) do
    local found = vim.fn.findfile(marker, start .. ";")
    if found == "" then
      found = vim.fn.finddir(marker, start .. ";")
    end
    if found ~= "" then
      return (vim.fn.fnamemodify(found, ":p:h"):gsub("/%.git$", ""))
    end
  end
  return vim.fn.getcwd()
end

local function client_config(root)
  return {
    name = "agentls",
    cmd = options.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = options.settings,
    settings = { agentls = options.settings },
  }
end

-- Start (or reuse) the server for the buffer's project and attach the buffer; returns the client id.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local root = find_root(bufnr)
  if vim.lsp.start then -- 0.8+: reuses the client with the same name and root
    return vim.lsp.start(client_config(root), { bufnr = bufnr })
  end
  local id = client_by_root[root]
  if id == nil or vim.lsp.get_client_by_id(id) == nil then
    id = vim.lsp.start_client(client_config(root)) -- 0.7 has nothing else
    client_by_root[root] = id
  end
  if id ~= nil then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

local function client_for(bufnr)
  if vim.lsp.get_clients then -- 0.10+
    return vim.lsp.get_clients({ bufnr = bufnr, name = "agentls" })[1]
  end
  for _, client in pairs(vim.lsp.buf_get_clients(bufnr)) do
    if client.name == "agentls" then
      return client
    end
  end
  return nil
end

local function request(client, method, params, handler, bufnr)
  if vim.fn.has("nvim-0.11") == 1 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

local send

-- Send workspace/executeCommand with one argument object; `on_result(result)` gets the answer.
function M.execute(command, argument, on_result)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = client_for(bufnr)
  if client == nil then
    vim.notify("agentls: no server attached to this buffer", vim.log.levels.WARN)
    return
  end
  send(client, bufnr, command, argument, on_result)
end

send = function(client, bufnr, command, argument, on_result)
  if next(argument) == nil then
    argument = vim.empty_dict() -- an empty Lua table would be sent as a JSON list
  end
  local params = { command = command, arguments = { argument } }
  request(client, "workspace/executeCommand", params, function(err, result)
    if err then
      vim.notify("agentls: " .. command .. ": " .. err.message, vim.log.levels.ERROR)
    elseif on_result then
      on_result(result)
    end
  end, bufnr)
end

local function target(opts)
  local arg = { uri = vim.uri_from_bufnr(0) }
  if opts and opts.range and opts.range > 0 then
    arg.range = { start = { line = opts.line1 - 1, character = 0 }, ["end"] = { line = opts.line2, character = 0 } }
  end
  return arg
end

local last_run
local function remember(result)
  if type(result) == "table" and result.runId then
    last_run = result.runId
    vim.notify("agentls: started run " .. result.runId)
  end
end

local function show_trace(result)
  local text = type(result) == "table" and result.markdown or result
  vim.cmd("new")
  vim.bo.buftype, vim.bo.bufhidden, vim.bo.filetype = "nofile", "wipe", "markdown"
  vim.api.nvim_buf_set_lines(0, 0, -1, false, vim.split(tostring(text or ""), "\n", { plain = true }))
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
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local argument = vim.deepcopy((command.arguments or {})[1] or {})
  ask_hint(function(hint)
    argument.hint = hint
    send(client, ctx.bufnr, command.command, argument, remember)
  end)
end
vim.lsp.commands["agentls.planAndFixWithHint"] = with_hint
vim.lsp.commands["agentls.retryWithHint"] = with_hint

local function show_report(result)
  local path = type(result) == "table" and result.path
  if not path then
    vim.notify("agentls: the server wrote no report", vim.log.levels.WARN)
    return
  end
  vim.notify("agentls: report of run " .. tostring(result.runId) .. ": " .. path)
  if vim.ui.open then -- 0.10+
    vim.ui.open(path)
  end
end

local function define_commands()
  local create = vim.api.nvim_create_user_command
  create("AgentlsPlanAndFix", function(o) M.execute("agentls.planAndFix", target(o), remember) end, { range = true })
  create("AgentlsGenerateTests", function(o) M.execute("agentls.generateTests", target(o), remember) end, { range = true })
  create("AgentlsRunTask", function(o)
    local arg = target(o)
    arg.goal = o.args
    M.execute("agentls.runTask", arg, remember)
  end, { nargs = "+", range = true })
  create("AgentlsRunTests", function() M.execute("agentls.runTests", {}, remember) end, {})
  create("AgentlsCancel", function() M.execute("agentls.cancel", { runId = last_run }) end, {})
  create("AgentlsShowTrace", function() M.execute("agentls.showTrace", { runId = last_run }, show_trace) end, {})
  create("AgentlsShowReport", function() M.execute("agentls.showReport", { runId = last_run }, show_report) end, {})
  create("AgentlsPlanAndFixWithHint", function(o)
    local arg = target(o)
    local function go(hint)
      arg.hint = hint
      M.execute("agentls.planAndFixWithHint", arg, remember)
    end
    if vim.trim(o.args) ~= "" then go(vim.trim(o.args)) else ask_hint(go) end
  end, { nargs = "*", range = true })
end

-- Configure, attach every Python buffer already open, and every one opened later.
function M.setup(opts)
  options = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  local group = vim.api.nvim_create_augroup("agentls", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = "python",
    callback = function(args) M.attach(args.buf) end,
  })
  define_commands()
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].filetype == "python" then
      M.attach(bufnr)
    end
  end
end

return M
