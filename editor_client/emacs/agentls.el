;;; agentls.el --- agentls for Python buffers through eglot  -*- lexical-binding: t; -*-

;;; Commentary:

;; Runs the agentls language server for Python buffers: `agentls-server-command'
;; when you set it; else `agentls serve --stdio' when `agentls' is on
;; `exec-path' (the recommended install, beside your project rather than in
;; it, from a checkout: `pipx install /path/to/agentls'); else
;; `python3 -m lsp_server' (agentls installed in that interpreter, e.g. an
;; activated venv).  It serves `python-mode' and
;; Emacs 29's `python-ts-mode', through eglot (built into Emacs 29;
;; `elpa-eglot' or M-x package-install eglot on Emacs 28).  Code actions
;; (Plan and fix, Generate tests) come through `eglot-code-actions'; the
;; commands below cover the rest.
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
;;   (add-hook 'python-ts-mode-hook #'eglot-ensure)
;;
;; Your own Python server stays: when `eglot-server-programs' already names
;; a Python server that is installed (pylsp, pyright, ... or your own entry),
;; agentls does not take its place; M-x agentls-eglot then starts agentls
;; for the current project when you want it, and
;; `agentls-replace-python-server' makes agentls the default instead.
;;
;; Setting names are the VS Code ones without "agentls." (see
;; editor_client/package.json); booleans are t / :json-false.  They are
;; added as the "agentls" section to whatever `eglot-workspace-configuration'
;; holds (a plist, a function, directory-local values), for agentls' server
;; only; a section "agentls" you write there yourself wins.

;;; Code:

(require 'eglot)
(require 'cl-lib)

(defgroup agentls nil
  "The agentls language server."
  :group 'tools)

(defcustom agentls-settings nil
  "Engine settings sent to the server as the \"agentls\" configuration section (a plist)."
  :type '(plist :key-type symbol)
  :group 'agentls)

(defcustom agentls-server-command nil
  "The command line that starts the agentls server over stdio.
nil: `agentls serve --stdio' when `agentls' is on `exec-path', else
`python3 -m lsp_server' (see `agentls-server-command-line')."
  :type '(choice (const :tag "agentls on exec-path, else python3 -m lsp_server" nil)
                 (repeat string))
  :group 'agentls)

(defcustom agentls-replace-python-server nil
  "Non-nil: agentls serves Python buffers even when another Python server is configured and installed."
  :type 'boolean
  :group 'agentls)

(defconst agentls-python-modes '(python-mode python-ts-mode)
  "The major modes agentls serves.")

(defconst agentls--modes-spec '((python-mode :language-id "python") (python-ts-mode :language-id "python"))
  "The modes of agentls' `eglot-server-programs' entry; both send languageId \"python\".")

(defun agentls-server-command-line ()
  "The command that starts the server: `agentls-server-command', else agentls on `exec-path', else python3."
  (cond (agentls-server-command)
        ((executable-find "agentls") (list "agentls" "serve" "--stdio"))
        (t (list "python3" "-m" "lsp_server"))))

(defun agentls-contact (&optional _interactive)
  "The eglot contact of the agentls server: `agentls-server-command-line'."
  (agentls-server-command-line))

(defun agentls--python-entry ()
  "The first `eglot-server-programs' entry for a mode of `agentls-python-modes', or nil."
  (cl-find-if (lambda (entry)
                (let ((modes (if (listp (car entry)) (car entry) (list (car entry)))))
                  (cl-some (lambda (mode) (memq (if (consp mode) (car mode) mode) agentls-python-modes)) modes)))
              eglot-server-programs))

(defun agentls--installed-p (entry)
  "Non-nil when the server program of ENTRY (an `eglot-server-programs' entry) can be started here."
  (let ((contact (cdr entry)))
    (condition-case nil
        (let ((command (if (functionp contact) (funcall contact nil) contact)))
          (and (consp command) (stringp (car command)) (executable-find (car command))))
      (error nil))))

(defun agentls-setup ()
  "Serve Python buffers with agentls unless another installed Python server is configured.
Returns non-nil when agentls was registered."
  (let ((entry (agentls--python-entry)))
    (if (and entry (not (eq (cdr entry) #'agentls-contact)) (agentls--installed-p entry)
             (not agentls-replace-python-server))
        (progn (message "agentls: keeping your Python language server; M-x agentls-eglot starts agentls") nil)
      (setq eglot-server-programs
            (cons (cons agentls--modes-spec #'agentls-contact)
                  (cl-remove-if (lambda (e) (eq (cdr e) #'agentls-contact)) eglot-server-programs)))
      t)))

(defun agentls-eglot ()
  "Start agentls for the current buffer's project, whatever `eglot-server-programs' says."
  (interactive)
  (let ((eglot-server-programs (cons (cons agentls--modes-spec #'agentls-contact) eglot-server-programs)))
    (apply #'eglot (eglot--guess-contact))))

(defun agentls--server-p (server)
  "Non-nil when SERVER is an agentls server (by its serverInfo name, else its command)."
  (or (equal (plist-get (eglot--server-info server) :name) "agentls")
      (equal (process-command (jsonrpc--process server)) (agentls-server-command-line))))

(defun agentls--with-section (next server &rest args)
  "Advice: NEXT's workspace configuration for SERVER (with ARGS), plus the \"agentls\" section."
  (let ((plist (apply next server args)))
    (if (or (not (agentls--server-p server)) (plist-member plist :agentls))
        plist
      (append plist (list :agentls (or agentls-settings eglot--{}))))))

(advice-add 'eglot--workspace-configuration-plist :around #'agentls--with-section)
(agentls-setup)

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

(defun agentls-show-report ()
  "Write the last run's HTML report (graph path, timeline, prompts, diffs, tests) and open it in the browser."
  (interactive)
  (let* ((answer (agentls--execute "agentls.showReport"
                                   (if agentls--last-run (list :runId agentls--last-run) eglot--{})))
         (path (plist-get answer :path)))
    (if (not (stringp path))
        (message "agentls: the server wrote no report")
      (message "agentls: report of run %s: %s" (plist-get answer :runId) path)
      (browse-url-of-file path))))

(provide 'agentls)
;;; agentls.el ends here
