;;; agentls.el --- agentls for Python buffers through eglot  -*- lexical-binding: t; -*-

;;; Commentary:

;; Runs the agentls language server (`python3 -m lsp_server`, agentls
;; installed in that interpreter, e.g. an activated venv) for Python buffers
;; through eglot (built into Emacs 29; `elpa-eglot' or M-x package-install
;; eglot on Emacs 28).  Code actions (Plan and fix, Generate tests) come
;; through `eglot-code-actions'; the commands below cover the rest.
;;
;; Install: put this file on `load-path' and add to your init file:
;;
;;   (require 'agentls)
;;   (setq agentls-settings
;;         '(:baseUrl "http://127.0.0.1:8080/v1"
;;           :model "qwen2.5-coder-1.5b"
;;           :apiKeyEnv "AGENTLS_API_KEY"       ; the NAME of the variable holding the key
;;           :roles (:coder (:model "qwen2.5-coder-7b"))
;;           :sandbox (:backend "bubblewrap" :timeoutS 120)))
;;   (add-hook 'python-mode-hook #'eglot-ensure)
;;
;; Setting names are the VS Code ones without "agentls." (see
;; editor_client/package.json); booleans are t / :json-false.  The settings
;; answer the server's workspace/configuration requests for "agentls".

;;; Code:

(require 'eglot)

(defgroup agentls nil
  "The agentls language server."
  :group 'tools)

(defcustom agentls-settings nil
  "Engine settings sent to the server as the \"agentls\" configuration section (a plist)."
  :type '(plist :key-type symbol)
  :group 'agentls)

(add-to-list 'eglot-server-programs '(python-mode . ("python3" "-m" "lsp_server")))

(defun agentls-workspace-configuration (_server)
  "The workspace configuration eglot sends: the \"agentls\" section."
  (list :agentls (or agentls-settings eglot--{})))

(setq-default eglot-workspace-configuration #'agentls-workspace-configuration)

(defvar agentls--last-run nil
  "The runId of the last run started from this Emacs.")

(defun agentls--target (&optional with-region)
  "The current buffer's uri, and the region's range when WITH-REGION and it is active."
  (append (eglot--TextDocumentIdentifier)
          (when (and with-region (use-region-p))
            (list :range (list :start (eglot--pos-to-lsp-position (region-beginning))
                               :end (eglot--pos-to-lsp-position (region-end)))))))

(defun agentls--execute (command argument)
  "Send workspace/executeCommand COMMAND with the single ARGUMENT plist; return the result."
  (jsonrpc-request (eglot--current-server-or-lose) :workspace/executeCommand
                   (list :command command :arguments (vector argument))))

(defun agentls--start (command argument)
  "Start a run with COMMAND and ARGUMENT and remember its id."
  (let ((run-id (plist-get (agentls--execute command argument) :runId)))
    (setq agentls--last-run run-id)
    (message "agentls: started run %s" run-id)))

(defun agentls-plan-and-fix ()
  "Plan and fix the region, or the whole file."
  (interactive)
  (agentls--start "agentls.planAndFix" (agentls--target t)))

(defun agentls-generate-tests ()
  "Generate tests for the region, or the whole file."
  (interactive)
  (agentls--start "agentls.generateTests" (agentls--target t)))

(defun agentls-run-task (goal)
  "Run a free-text GOAL against the workspace."
  (interactive "sagentls task: ")
  (agentls--start "agentls.runTask" (append (list :goal goal) (agentls--target t))))

(defun agentls-run-tests ()
  "Run the workspace's tests in the sandbox."
  (interactive)
  (agentls--start "agentls.runTests" eglot--{}))

(defun agentls-cancel ()
  "Cancel the last run started here."
  (interactive)
  (agentls--execute "agentls.cancel" (if agentls--last-run (list :runId agentls--last-run) eglot--{})))

(defun agentls-show-trace ()
  "Show the last run's trace (Markdown) in a buffer."
  (interactive)
  (let* ((answer (agentls--execute "agentls.showTrace"
                                   (if agentls--last-run (list :runId agentls--last-run) eglot--{})))
         (text (if (stringp answer) answer (plist-get answer :markdown))))
    (with-current-buffer (get-buffer-create "*agentls trace*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (or text ""))
        (when (fboundp 'markdown-mode) (markdown-mode))
        (goto-char (point-min)))
      (display-buffer (current-buffer)))))

(provide 'agentls)
;;; agentls.el ends here
