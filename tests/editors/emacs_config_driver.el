;;; emacs_config_driver.el --- how the shipped snippet fits into a user's eglot setup  -*- lexical-binding: t; -*-

;; One scenario per Emacs process ($AGENTLS_EMACS_SCENARIO), what it saw
;; written as JSON to $AGENTLS_E2E_OUT:
;;   fresh   - no Python server of the user's: python-mode and python-ts-mode
;;             buffers (python-ts-mode defined as a plain mode where Emacs is
;;             older than 29) both get agentls, with languageId "python".
;;   own     - the user's own installed Python server (`cat' stands for it)
;;             stays; M-x agentls-eglot's contact and `agentls-replace-python-server'
;;             still reach agentls.
;;   command - which server command: `agentls' on exec-path as
;;             `agentls serve --stdio' (the test's PATH has none here), else
;;             `python3 -m lsp_server'; `agentls-server-command' as given.
;;   merge   - the user's eglot-workspace-configuration (set before the
;;             snippet loads, and a function set after it) is kept and the
;;             real server, started through eglot, is answered both the
;;             user's sections and "agentls".
;;   cli     - M-x agentls-cli-fix beside the user's own Python server: the
;;             agentls CLI fixes the project in a compilation buffer, with
;;             the hint read like a user would type it.
;;   project - a directory without version control: the project (and so
;;             eglot's root) is the nearest pyproject.toml/.agentls.toml above.

(require 'json)
(require 'cl-lib)

(defvar driver-result nil "Alist written as JSON at the end.")
(defun driver-note (key value) (push (cons key value) driver-result))

(defun driver-contact-in (mode)
  "(managed modes, language id, command) eglot guesses for a file buffer in MODE."
  (with-temp-buffer
    (setq buffer-file-name (expand-file-name "calc.py"))
    (funcall mode)
    (let ((guess (eglot--guess-contact)))
      (setq buffer-file-name nil)
      ;; (MANAGED-MODES PROJECT CLASS CONTACT LANGUAGE-ID)
      (list (symbol-name (car (nth 0 guess))) (nth 4 guess) (vconcat (nth 3 guess))))))

(unless (fboundp 'python-ts-mode)
  (define-derived-mode python-ts-mode prog-mode "Python[ts]" "Stands in for Emacs 29's python-ts-mode."))

(defun driver-fresh ()
  (load (getenv "AGENTLS_EMACS_SNIPPET") nil t)
  (driver-note 'python_mode (vconcat (driver-contact-in #'python-mode)))
  (driver-note 'python_ts_mode (vconcat (driver-contact-in #'python-ts-mode)))
  (with-temp-buffer
    (setq buffer-file-name (expand-file-name "calc.py"))
    (python-mode)
    (driver-note 'server_class (symbol-name (nth 2 (eglot--guess-contact))))
    (setq buffer-file-name nil))
  ;; The commands' target, built without eglot internals: the file's uri, and the region as an LSP range.
  (with-current-buffer (find-file-noselect (expand-file-name "calc.py"))
    (driver-note 'target (agentls--target t))
    (goto-char (point-min))
    (forward-line 1)
    (set-mark (+ (point) 4))
    (end-of-line)
    (activate-mark)
    (let ((transient-mark-mode t))
      (driver-note 'target_region (agentls--target t)))))

(defun driver-cli ()
  (require 'eglot)
  (add-to-list 'eglot-server-programs '(python-mode . ("cat")))
  (load (getenv "AGENTLS_EMACS_SNIPPET") nil t)
  (find-file (expand-file-name "calc.py"))
  (cl-letf (((symbol-function 'read-string) (lambda (&rest _) (getenv "E2E_AGENTLS_HINT"))))
    (call-interactively #'agentls-cli-fix))
  (let ((deadline (+ (float-time) 200)))
    (while (and (get-buffer-process "*agentls fix*") (< (float-time) deadline))
      (accept-process-output nil 0.2)))
  (driver-note 'python_mode_contact (vconcat (nth 3 (eglot--guess-contact))))
  (driver-note 'output (with-current-buffer "*agentls fix*" (buffer-substring-no-properties (point-min) (point-max)))))

(defun driver-project ()
  (load (getenv "AGENTLS_EMACS_SNIPPET") nil t)
  (let* ((top (file-name-as-directory (make-temp-file "agentls-proj" t)))
         (inner (expand-file-name "pkg/sub/" top)))
    (make-directory inner t)
    (with-temp-file (expand-file-name "pyproject.toml" top) (insert "[project]\nname = \"x\"\n"))
    (driver-note 'top top)
    (driver-note 'root_from_inner (project-root (project-current nil inner)))
    (with-temp-file (expand-file-name "pkg/.agentls.toml" top) (insert ""))
    (driver-note 'root_nearest (project-root (project-current nil inner)))
    (driver-note 'vc_dirs (vconcat (cl-remove-if-not (lambda (d) (locate-dominating-file top d)) '(".git" ".hg"))))
    (delete-directory top t)))

(defun driver-own ()
  (require 'eglot)
  (add-to-list 'eglot-server-programs '(python-mode . ("cat")))
  (load (getenv "AGENTLS_EMACS_SNIPPET") nil t)
  (driver-note 'python_mode (vconcat (driver-contact-in #'python-mode)))
  (driver-note 'agentls_eglot_contact (vconcat (agentls-contact)))
  (setq agentls-replace-python-server t)
  (driver-note 'setup_when_replacing (if (agentls-setup) t :json-false))
  (driver-note 'python_mode_replaced (vconcat (driver-contact-in #'python-mode))))

(defun driver-command ()
  (load (getenv "AGENTLS_EMACS_SNIPPET") nil t)
  (driver-note 'without_agentls (vconcat (agentls-contact)))
  (let ((bin (make-temp-file "agentls-bin" t)))
    (with-temp-file (expand-file-name "agentls" bin) (insert "#!/bin/sh\n"))
    (set-file-modes (expand-file-name "agentls" bin) #o755)
    (let ((exec-path (cons bin exec-path)))
      (driver-note 'with_agentls (vconcat (agentls-contact)))
      (driver-note 'python_mode_with_agentls (vconcat (driver-contact-in #'python-mode))))
    (delete-directory bin t))
  (setq agentls-server-command '("/opt/venv/bin/python" "-m" "lsp_server"))
  (driver-note 'configured (vconcat (agentls-contact))))

(defun driver-configuration (server &rest sections)
  "eglot's answer to the server's workspace/configuration request for SECTIONS."
  (eglot-handle-request server 'workspace/configuration
                        :items (vconcat (mapcar (lambda (section) (list :section section)) sections))))

(defun driver-merge ()
  (require 'eglot)
  (setq-default eglot-workspace-configuration '(:pylsp (:plugins (:ruff (:enabled t)))))
  (load (getenv "AGENTLS_EMACS_SNIPPET") nil t)
  (setq agentls-settings (list :model (getenv "E2E_AGENTLS_MODEL")))
  (driver-note 'kept_before (if (equal (default-value 'eglot-workspace-configuration)
                                       '(:pylsp (:plugins (:ruff (:enabled t)))))
                                t :json-false))
  (find-file (expand-file-name "calc.py"))
  (apply #'eglot (eglot--guess-contact))
  (let ((server (or (cl-loop repeat 300 for s = (eglot-current-server) when s return s
                             do (accept-process-output nil 0.1))
                    (error "eglot never connected"))))
    (driver-note 'answer_before (driver-configuration server "pylsp" "agentls"))
    ;; a user who sets a function afterwards (e.g. from a hook) is not overwritten either
    (setq-default eglot-workspace-configuration (lambda (_server) '(:ruff (:lineLength 100))))
    (driver-note 'answer_after (driver-configuration server "ruff" "agentls"))
    (setq-default eglot-workspace-configuration '(:agentls (:model "the-users-own")))
    (driver-note 'answer_own_section (driver-configuration server "agentls"))
    (eglot-shutdown server)))

(condition-case err
    (pcase (getenv "AGENTLS_EMACS_SCENARIO")
      ("fresh" (driver-fresh))
      ("own" (driver-own))
      ("command" (driver-command))
      ("merge" (driver-merge))
      ("project" (driver-project))
      ("cli" (driver-cli))
      (other (error "unknown scenario %s" other)))
  (error (driver-note 'error (error-message-string err))))

(with-temp-file (getenv "AGENTLS_E2E_OUT")
  (insert (json-encode driver-result)))
(kill-emacs 0)
