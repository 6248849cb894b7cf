-- Drives Neovim 0.11+ headless through the shipped native config (editor_client/nvim/lsp/agentls.lua):
-- put editor_client/nvim on 'runtimepath', vim.lsp.config() only the settings, vim.lsp.enable(),
-- open calc.py, then the same flow as nvim_driver.lua: list code actions, choose "Plan and fix" through
-- vim.lsp.buf.code_action(), wait for the edit in the buffer, :AgentlsShowTrace, write what it
-- saw as JSON to $AGENTLS_E2E_OUT, stop the server and quit. Only current API calls.

local result = { titles = {}, steps = {}, messages = {}, deprecated = {} }
local run_ended = false
local function step(name) table.insert(result.steps, name) end

local report_deprecated = vim.deprecate -- Neovim reports each deprecated call through it: record them
vim.deprecate = function(name, ...)
  table.insert(result.deprecated, name)
  return report_deprecated(name, ...)
end

local function finish()
  local file = assert(io.open(os.getenv("AGENTLS_E2E_OUT"), "w"))
  file:write(vim.json.encode(result))
  file:close()
  for _, client in ipairs(vim.lsp.get_clients()) do
    client:stop()
  end
  vim.wait(15000, function() return #vim.lsp.get_clients() == 0 end, 50)
  vim.cmd("qall!")
end

local function agentls_client(bufnr)
  local client = vim.lsp.get_clients({ bufnr = bufnr, name = "agentls" })[1]
  return client and client.initialized and client or nil
end

local function run()
  vim.lsp.handlers["window/showMessage"] = function(_, params)
    table.insert(result.messages, params.message)
    if params.message:find("Plan and fix (", 1, true) and not params.message:find("started", 1, true) then
      run_ended = true
    end
  end
  -- Neovim declares no changeAnnotationSupport: the server asks Apply / Show diff / Discard; answer Apply
  -- as a user would, through the handler Neovim's own vim.ui.select would otherwise show.
  result.questions = {}
  vim.lsp.handlers["window/showMessageRequest"] = function(_, params)
    table.insert(result.questions, params.message)
    for _, action in ipairs(params.actions or {}) do
      if action.title == "Apply" then return action end
    end
    return vim.NIL
  end
  vim.opt.runtimepath:prepend(os.getenv("AGENTLS_NVIM_RTP"))
  vim.lsp.config("agentls", {
    settings = {
      agentls = {
        baseUrl = os.getenv("E2E_AGENTLS_BASE_URL"),
        model = os.getenv("E2E_AGENTLS_MODEL"),
        memory = { enabled = false },
        sandbox = { timeoutS = 60 },
      },
    },
  })
  result.cmd = vim.lsp.config.agentls.cmd
  vim.lsp.enable("agentls")
  vim.cmd.edit("calc.py") -- opened after enable, as when init.lua enables it and then a file is opened
  local bufnr = vim.api.nvim_get_current_buf()
  assert(vim.wait(30000, function() return agentls_client(bufnr) ~= nil end, 50), "the server never initialised")
  step("attached")
  local client = agentls_client(bufnr)
  result.root_dir = client.config.root_dir
  result.commands = vim.tbl_keys(vim.api.nvim_buf_get_commands(bufnr, {}))

  vim.api.nvim_win_set_cursor(0, { 2, 4 })
  local params = vim.lsp.util.make_range_params(0, client.offset_encoding)
  params.context = { diagnostics = {} }
  local answers = vim.lsp.buf_request_sync(bufnr, "textDocument/codeAction", params, 10000) or {}
  for _, answer in pairs(answers) do
    for _, action in ipairs(answer.result or {}) do
      table.insert(result.titles, action.title)
    end
  end
  step("code actions listed")

  -- With $E2E_AGENTLS_HINT, "Plan and fix with a hint..." is chosen and the config's vim.ui.input answered.
  local hint = os.getenv("E2E_AGENTLS_HINT")
  local wanted = hint and "Plan and fix with a hint..." or "Plan and fix"
  vim.ui.input = function(opts, on_confirm)
    result.hint_prompt = opts.prompt
    on_confirm(hint)
  end
  vim.ui.select = function(items, opts, on_choice)
    for index, item in ipairs(items) do
      if opts.format_item(item) == wanted then
        return on_choice(item, index)
      end
    end
    on_choice(nil, nil)
  end
  vim.lsp.buf.code_action()
  step("plan and fix chosen")

  local function buffer_fixed()
    return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n"):find("a + b", 1, true) ~= nil
  end
  vim.wait(180000, function() return buffer_fixed() or run_ended end, 100)
  vim.wait(2000, buffer_fixed, 50)
  result.edit_applied = buffer_fixed()
  result.buffer = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  result.modified = vim.bo[bufnr].modified
  step("waited for the edit")

  vim.wait(30000, function() return run_ended end, 100)
  vim.cmd("AgentlsShowTrace")
  vim.wait(15000, function() return vim.bo.filetype == "markdown" end, 100)
  if vim.bo.filetype == "markdown" then
    result.trace = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  end
  step("trace shown")

  vim.cmd("close") -- back to calc.py from the trace's window
  result.notes = {}
  vim.notify = function(text) table.insert(result.notes, text) end
  vim.ui.open = function(path) result.report_path = path end
  vim.cmd("AgentlsShowReport")
  vim.wait(30000, function() return result.report_path ~= nil end, 100)
  step("report shown")
end

local ok, err = pcall(run)
if not ok then
  result.error = tostring(err)
end
finish()
