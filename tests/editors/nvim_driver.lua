-- Drives Neovim headless through the shipped snippet (editor_client/nvim/agentls.lua):
-- attach the server to calc.py, list code actions, choose "Plan and fix" through
-- vim.lsp.buf.code_action() (vim.ui.select answered like a user would), wait for
-- the server's workspace/applyEdit to change the buffer, then write what it saw
-- as JSON to $AGENTLS_E2E_OUT, stop the server and quit.

-- The driver runs on Neovim 0.7 and on 0.11+, with each one's current calls; on 0.11+ every use of a
-- deprecated function (Neovim reports them through vim.deprecate) is recorded in `deprecated`.

local result = { titles = {}, steps = {}, messages = {}, deprecated = {} }
local run_ended = false
local modern = vim.fn.has("nvim-0.11") == 1
local function step(name) table.insert(result.steps, name) end

local report_deprecated = vim.deprecate
vim.deprecate = function(name, ...)
  table.insert(result.deprecated, name)
  return report_deprecated(name, ...)
end

local function all_clients(filter)
  if modern then
    return vim.lsp.get_clients(filter)
  end
  return filter and vim.lsp.buf_get_clients(filter.bufnr) or vim.lsp.get_active_clients()
end

local function finish()
  local file = assert(io.open(os.getenv("AGENTLS_E2E_OUT"), "w"))
  file:write(vim.fn.json_encode(result))
  file:close()
  for _, client in pairs(all_clients()) do
    if modern then client:stop() else client.stop() end
  end
  vim.wait(15000, function() return #all_clients() == 0 end, 50)
  vim.cmd("qall!")
end

local function agentls_client(bufnr)
  for _, client in pairs(all_clients({ bufnr = bufnr })) do
    if client.name == "agentls" and client.initialized then
      return client
    end
  end
  return nil
end

local function run()
  -- Record the server's messages; one naming the run and its outcome ends the wait early.
  vim.lsp.handlers["window/showMessage"] = function(_, params)
    table.insert(result.messages, params.message)
    if params.message:find("Plan and fix (", 1, true) and not params.message:find("started", 1, true) then
      run_ended = true
    end
  end
  -- Neovim 0.7 declares no changeAnnotationSupport: the server asks Apply / Show diff / Discard; apply.
  result.questions = {}
  vim.lsp.handlers["window/showMessageRequest"] = function(_, params)
    table.insert(result.questions, params.message)
    for _, action in ipairs(params.actions or {}) do
      if action.title == "Apply" then return action end
    end
    return vim.NIL
  end
  local agentls = dofile(os.getenv("AGENTLS_NVIM_SNIPPET"))
  agentls.setup({
    settings = {
      baseUrl = os.getenv("E2E_AGENTLS_BASE_URL"),
      model = os.getenv("E2E_AGENTLS_MODEL"),
      memory = { enabled = false },
      sandbox = { timeoutS = 60 },
    },
  })
  local bufnr = vim.api.nvim_get_current_buf()
  assert(vim.wait(30000, function() return agentls_client(bufnr) ~= nil end, 50), "the server never initialised")
  step("attached")
  result.root_dir = agentls_client(bufnr).config.root_dir

  vim.api.nvim_win_set_cursor(0, { 2, 4 })
  local params = modern and vim.lsp.util.make_range_params(0, agentls_client(bufnr).offset_encoding)
    or vim.lsp.util.make_range_params()
  params.context = { diagnostics = {} }
  local answers = vim.lsp.buf_request_sync(bufnr, "textDocument/codeAction", params, 10000) or {}
  for _, answer in pairs(answers) do
    for _, action in ipairs(answer.result or {}) do
      table.insert(result.titles, action.title)
    end
  end
  step("code actions listed")

  -- With $E2E_AGENTLS_HINT, "Plan and fix with a hint..." is chosen and the snippet's vim.ui.input answered.
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
  vim.wait(2000, buffer_fixed, 50)  -- the edit may trail the closing message by a moment
  local fixed = buffer_fixed()
  result.edit_applied = fixed
  result.buffer = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  result.modified = vim.bo[bufnr].modified
  step("waited for the edit")

  -- The snippet's :AgentlsShowTrace opens the (latest) run's trace in a Markdown scratch buffer.
  vim.wait(30000, function() return run_ended end, 100)
  vim.cmd("AgentlsShowTrace")
  vim.wait(15000, function() return vim.bo.filetype == "markdown" end, 100)
  if vim.bo.filetype == "markdown" then
    result.trace = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  end
  step("trace shown")

  -- :AgentlsShowReport writes the run's HTML report and opens it with vim.ui.open (recorded here).
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
