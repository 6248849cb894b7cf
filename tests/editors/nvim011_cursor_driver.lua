-- Drives Neovim 0.11+ headless through the shipped native config: with agentls' diagnostic of the failing assert
-- in tests/test_calc.py, puts the cursor in that line's indentation (column 0, where j/k land) and asks for code
-- actions the way `gra` does (vim.lsp.buf.code_action, which sends the line's diagnostics in the context).
-- Writes the offered titles and kinds as JSON to $AGENTLS_E2E_OUT.

local result = { actions = {} }

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
  vim.opt.runtimepath:prepend(os.getenv("AGENTLS_NVIM_RTP"))
  vim.lsp.config("agentls", {
    settings = { agentls = { baseUrl = os.getenv("E2E_AGENTLS_BASE_URL"), model = os.getenv("E2E_AGENTLS_MODEL"),
                             memory = { enabled = false }, sandbox = { timeoutS = 240 } } },
  })
  vim.lsp.enable("agentls")
  vim.cmd.edit("tests/test_calc.py")
  local bufnr = vim.api.nvim_get_current_buf()
  assert(vim.wait(30000, function() return agentls_client(bufnr) ~= nil end, 50), "the server never initialised")
  -- the failing assert's diagnostic as agentls publishes it after a test run (the run itself is the LSP tests'),
  -- through Neovim's own handler, so that it lands in the client's namespace as a published one does
  local client = agentls_client(bufnr)
  vim.lsp.diagnostic.on_publish_diagnostics(nil, {
    uri = vim.uri_from_bufnr(bufnr),
    diagnostics = { {
      range = { start = { line = 4, character = 4 }, ["end"] = { line = 4, character = 29 } },
      severity = 1, source = "agentls", code = "tests/test_calc.py::test_add", message = "assert -1 == 3",
    } },
  }, { client_id = client.id, method = "textDocument/publishDiagnostics" })
  assert(vim.wait(5000, function() return #vim.diagnostic.get(bufnr) > 0 end, 50), "no diagnostic on the test")
  local diagnostic = vim.diagnostic.get(bufnr)[1]
  result.diagnostic = { lnum = diagnostic.lnum, col = diagnostic.col, message = diagnostic.message }
  vim.api.nvim_win_set_cursor(0, { diagnostic.lnum + 1, 0 })
  vim.ui.select = function(items, opts, on_choice)
    for _, item in ipairs(items) do
      table.insert(result.actions, { title = opts.format_item(item), kind = item.action.kind or vim.NIL })
    end
    on_choice(nil, nil)
  end
  vim.lsp.buf.code_action()
  vim.wait(15000, function() return #result.actions > 0 end, 50)
end

local ok, err = pcall(run)
if not ok then
  result.error = tostring(err)
end
finish()
