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
;; agentls does not take its place.  eglot runs one server per major mode and
;; project, so agentls cannot serve the same buffers beside pyright or pylsp
;; through eglot.  Beside them, M-x agentls-cli-fix runs the agentls CLI on
;; the current project (`agentls fix .', with a hint when you give one; with
;; C-u it saves and applies the verified fix) in a compilation buffer, no
;; eglot needed; M-x agentls-eglot switches the current project's Python
;; buffers to agentls through eglot; `agentls-replace-python-server' makes
;; agentls the default instead.
;;
;; "Plan and fix with a hint..." and "Retry with a hint..." (on the failing
;; tests of a run that did not fix them) ask the hint with `read-string';
;; M-x agentls-plan-and-fix-with-hint does the same from the region or file.
;;
;; A Python file in a directory without version control still gets its
;; project from the nearest pyproject.toml or .agentls.toml above it
;; (`project-find-functions'), so eglot does not ask for the root.
;;
;; Setting names are the VS Code ones without "agentls." (see
;; editor_client/package.json); booleans are t / :json-false.  They are
;; added as the "agentls" section to whatever `eglot-workspace-configuration'
;; holds (a plist, a function, directory-local values), for agentls' server
;; only; a section "agentls" you write there yourself wins.

;;; Code:

(require 'eglot)
(require 'cl-lib)
(require 'project)
(require 'subr-x)
(require 'url-util)

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
  "The command that starts the agentls server: `agentls-server-command-line'."
  (agentls-server-command-line))

(defclass agentls-eglot-server (eglot-lsp-server) ()
  "The agentls server as eglot sees it: it asks hints, and says eglot answers questions."
  :documentation "agentls' eglot server class.")

(defun agentls-eglot-contact (&optional interactive)
  "The `eglot-server-programs' contact of agentls: its server class and `agentls-contact' (INTERACTIVE unused)."
  (cons 'agentls-eglot-server (agentls-contact interactive)))

(cl-defmethod eglot-client-capabilities :around ((_server agentls-eglot-server))
  "eglot answers window/showMessageRequest (with `completing-read') but does not say so: say it for agentls.
Without it agentls cannot ask Apply / Show diff / Discard and keeps each fix as a code action instead."
  (let* ((capabilities (cl-call-next-method))
         (window (copy-sequence (plist-get capabilities :window))))
    (plist-put capabilities :window
               (plist-put window :showMessage '(:messageActionItem (:additionalPropertiesSupport :json-false))))))

(cl-defmethod eglot-initialization-options ((_server agentls-eglot-server))
  "`agentls-settings' as the server's initializationOptions."
  (or agentls-settings (make-hash-table)))

(cl-defmethod eglot-handle-request :around
  ((_server agentls-eglot-server) (_method (eql workspace/configuration)) &key items)
  "eglot's answer to workspace/configuration (ITEMS), with `agentls-settings' as the \"agentls\"
section where `eglot-workspace-configuration' has none of its own."
  (vconcat (cl-mapcar (lambda (item value)
                        (if (and (equal (plist-get item :section) "agentls") (null value))
                            (or agentls-settings (make-hash-table))
                          value))
                      items (cl-call-next-method))))

(defconst agentls-hint-commands '("agentls.planAndFixWithHint" "agentls.retryWithHint")
  "The server commands of the code actions that need the user's hint first.")

(defun agentls-read-hint ()
  "Ask the user's hint; nil when it is blank."
  (let ((hint (string-trim (read-string "agentls hint (where the bug is, what not to touch): "))))
    (unless (string-empty-p hint) hint)))

(cl-defmethod eglot-execute-command ((server agentls-eglot-server) command arguments)
  "Ask the hint of \"Plan and fix with a hint...\" and \"Retry with a hint...\" (COMMAND) first:
the server cannot ask for text, so its one argument (ARGUMENTS) goes back with `:hint' added."
  (if (not (member (format "%s" command) agentls-hint-commands))
      (cl-call-next-method)
    (let ((hint (agentls-read-hint))
          (argument (copy-sequence (if (> (length arguments) 0) (elt arguments 0) nil))))
      (when hint
        (cl-call-next-method server command (vector (plist-put argument :hint hint)))))))

(defconst agentls-project-markers '("pyproject.toml" ".agentls.toml")
  "Files that mark a Python project's root when no version control does.")

(defun agentls-project-find (directory)
  "The project of DIRECTORY by the nearest `agentls-project-markers' above it, for `project-find-functions'."
  (let* ((found (delq nil (mapcar (lambda (marker) (locate-dominating-file directory marker))
                                  agentls-project-markers)))
         (nearest (car (sort (mapcar #'expand-file-name found) (lambda (a b) (> (length a) (length b)))))))
    (when nearest (cons 'agentls (file-name-as-directory nearest)))))

(cl-defmethod project-root ((project (head agentls)))
  "The root of an agentls PROJECT: the directory of its pyproject.toml or .agentls.toml."
  (cdr project))

;; Last: a version-controlled project (project-try-vc) still wins.
(add-hook 'project-find-functions #'agentls-project-find 90)

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
    (if (and entry (not (eq (cdr entry) #'agentls-eglot-contact)) (agentls--installed-p entry)
             (not agentls-replace-python-server))
        (progn (message "agentls: keeping your Python language server; M-x agentls-eglot starts agentls") nil)
      (setq eglot-server-programs
            (cons (cons agentls--modes-spec #'agentls-eglot-contact)
                  (cl-remove-if (lambda (e) (eq (cdr e) #'agentls-eglot-contact)) eglot-server-programs)))
      t)))

(defun agentls-eglot ()
  "Serve the current project's Python buffers with agentls through eglot, whatever
`eglot-server-programs' says (eglot runs one server per mode and project: this one replaces yours there)."
  (interactive)
  (let ((eglot-server-programs (cons (cons agentls--modes-spec #'agentls-eglot-contact) eglot-server-programs)))
    (call-interactively #'eglot)))

(agentls-setup)

(defvar agentls--last-run nil
  "The runId of the last run started from this Emacs.")

(defun agentls--position (pos)
  "The LSP position of POS: zero-based line, and the column as `eglot-current-column-function' counts it."
  (save-excursion
    (goto-char pos)
    (list :line (1- (line-number-at-pos pos t)) :character (funcall eglot-current-column-function))))

(defun agentls--target (&optional with-region)
  "The current buffer's uri, and the region's range when WITH-REGION and it is active."
  (append (list :uri (concat "file://" (url-hexify-string (file-truename buffer-file-name) url-path-allowed-chars)))
          (when (and with-region (use-region-p))
            (list :range (list :start (agentls--position (region-beginning))
                               :end (agentls--position (region-end)))))))

(defun agentls--execute (command argument)
  "Send workspace/executeCommand COMMAND with the single ARGUMENT plist; return the result."
  (let ((server (or (eglot-current-server) (user-error "agentls: no language server for this buffer"))))
    (jsonrpc-request server :workspace/executeCommand
                     (list :command command :arguments (vector (or argument (make-hash-table)))))))

(defun agentls--start (command argument)
  "Start a run with COMMAND and ARGUMENT and remember its id."
  (let ((run-id (plist-get (agentls--execute command argument) :runId)))
    (setq agentls--last-run run-id)
    (message "agentls: started run %s" run-id)))

(defun agentls-plan-and-fix ()
  "Plan and fix the region, or the whole file."
  (interactive)
  (agentls--start "agentls.planAndFix" (agentls--target t)))

(defun agentls-plan-and-fix-with-hint (hint)
  "Plan and fix the region, or the whole file, steered by HINT (where the bug is, what not to touch)."
  (interactive (list (or (agentls-read-hint) (user-error "agentls: no hint given"))))
  (agentls--start "agentls.planAndFixWithHint" (append (list :hint hint) (agentls--target t))))

(defun agentls-cli-fix (&optional hint apply)
  "Run `agentls fix' on the current buffer's project in a compilation buffer: no eglot needed, so
it works beside pyright or pylsp.  It fixes the failing tests; HINT steers it (asked interactively;
empty for none).  Without APPLY it shows the verified diff; with APPLY (\\[universal-argument])
the buffers are saved first and the verified fix is written to disk (revert the buffers after)."
  (interactive (list (agentls-read-hint) current-prefix-arg))
  (let* ((root (or (let ((project (project-current nil))) (and project (project-root project)))
                   default-directory))
         (default-directory root)
         (process-environment (cons "NO_COLOR=1" process-environment))
         (command (append (list (agentls-cli-program) "fix" ".")
                          (when hint (list "--hint" hint))
                          (when apply (list "--apply")))))
    (when apply (save-some-buffers))
    ;; A pipe, not a pty: the CLI then prints plain lines (no live progress redrawn with escape codes).
    (let ((process-connection-type nil))
      (compilation-start (mapconcat #'shell-quote-argument command " ") nil (lambda (_mode) "*agentls fix*")))))

(defun agentls-cli-program ()
  "The agentls CLI: the first word of `agentls-server-command' when it names agentls, else `agentls'."
  (let ((first (car agentls-server-command)))
    (if (and first (string-suffix-p "agentls" first)) first "agentls")))

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
  (agentls--start "agentls.runTests" nil))

(defun agentls-cancel ()
  "Cancel the last run started here."
  (interactive)
  (agentls--execute "agentls.cancel" (and agentls--last-run (list :runId agentls--last-run))))

(defun agentls-show-trace ()
  "Show the last run's trace (Markdown) in a buffer."
  (interactive)
  (let* ((answer (agentls--execute "agentls.showTrace"
                                   (and agentls--last-run (list :runId agentls--last-run))))
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
                                   (and agentls--last-run (list :runId agentls--last-run))))
         (path (plist-get answer :path)))
    (if (not (stringp path))
        (message "agentls: the server wrote no report")
      (message "agentls: report of run %s: %s" (plist-get answer :runId) path)
      (browse-url-of-file path))))

(provide 'agentls)
;;; agentls.el ends here
