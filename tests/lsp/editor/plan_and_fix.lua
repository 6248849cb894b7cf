-- Headless Neovim (0.7+) drives agentls: attach, ask for code actions, run
-- "Plan and fix", wait for the server's workspace/applyEdit to change the
-- buffer, then write what happened as JSON to $AGENTLS_NVIM_OUT and quit.
local out_path = os.getenv("AGENTLS_NVIM_OUT")
local result = { messages = {}, questions = {}, titles = {}, kinds = {} }

local function finish()
  local f = io.open(out_path, "w")
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd("qa!")
end

local ok, err = pcall(function()
  local bufnr = vim.api.nvim_get_current_buf()
  local client_id = vim.lsp.start_client({
    name = "agentls",
    cmd = { os.getenv("AGENTLS_PYTHON"), "-m", "lsp_server" },
    root_dir = os.getenv("AGENTLS_WS"),
    init_options = { baseUrl = os.getenv("AGENTLS_TEST_BASE_URL"), model = "scripted", memory = { enabled = false } },
    handlers = {
      ["window/showMessage"] = function(_, params) table.insert(result.messages, params.message) end,
      -- no changeAnnotationSupport in Neovim 0.7: the server asks first; answer Apply like a user would
      ["window/showMessageRequest"] = function(_, params)
        table.insert(result.questions, params.message)
        for _, action in ipairs(params.actions or {}) do
          if action.title == "Apply" then return action end
        end
        return vim.NIL
      end,
    },
  })
  vim.lsp.buf_attach_client(bufnr, client_id)
  local client
  vim.wait(60000, function()
    client = vim.lsp.get_client_by_id(client_id)
    return client ~= nil and client.initialized
  end, 50)
  assert(client and client.initialized, "the server did not initialise")

  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = { start = { line = 1, character = 4 }, ["end"] = { line = 1, character = 4 } },
    context = { diagnostics = {} },
  }
  local actions
  client.request("textDocument/codeAction", params, function(e, res) actions = res or {} end, bufnr)
  vim.wait(30000, function() return actions ~= nil end, 20)
  local fix
  for _, action in ipairs(actions or {}) do
    table.insert(result.titles, action.title)
    table.insert(result.kinds, action.kind)
    if action.title == "Plan and fix" then fix = action end
  end
  assert(fix, "no Plan and fix action")

  client.request("workspace/executeCommand", fix.command, function(e, res)
    result.command_error = e and e.message or vim.NIL
    result.run_id = res and res.runId or vim.NIL
  end, bufnr)
  local original = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
  vim.wait(240000, function()
    return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n") ~= original
  end, 100)
  result.buffer = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n") .. "\n"
  result.disk_untouched = (table.concat(vim.fn.readfile(vim.api.nvim_buf_get_name(bufnr)), "\n") == original)
  client.stop()
  vim.wait(10000, function() return client.is_stopped() end, 50)
end)
if not ok then result.error = tostring(err) end
finish()
