;;; emacs_driver.el --- drive Emacs + eglot headless through the shipped snippet  -*- lexical-binding: t; -*-

;; Loads editor_client/emacs/agentls.el, visits calc.py, starts eglot (the
;; snippet's `python3 -m lsp_server`), lists the code actions, chooses "Plan
;; and fix" through `eglot-code-actions' (the completion prompt answered like
;; a user would), waits for the server's workspace/applyEdit to change the
;; buffer, writes what it saw as JSON to $AGENTLS_E2E_OUT, shuts the server
;; down and exits.

(require 'json)
(require 'cl-lib)
(load (getenv "AGENTLS_EMACS_SNIPPET") nil t)

(setq agentls-settings
      (list :baseUrl (getenv "E2E_AGENTLS_BASE_URL")
            :model (getenv "E2E_AGENTLS_MODEL")
            :memory '(:enabled :json-false)
            :sandbox '(:timeoutS 60)))
(setq eglot-confirm-server-initiated-edits nil)

(defvar driver-result nil "Alist written as JSON at the end.")
(defvar driver-messages nil "The server's window/showMessage texts.")
(defvar driver-run-ended nil "A message named the Plan and fix run's outcome.")

(cl-defmethod eglot-handle-notification :before
  (_server (_method (eql window/showMessage)) &key _type message)
  (push message driver-messages)
  (when (and (string-match-p (regexp-quote "Plan and fix (") message)
             (not (string-match-p "started" message)))
    (setq driver-run-ended t)))

(defvar driver-questions nil "The server's window/showMessageRequest texts, each answered Apply.")

(cl-defmethod eglot-handle-request :around
  (_server (_method (eql window/showMessageRequest)) &key message &allow-other-keys)
  "Answer agentls' preview question (Apply / Show diff / Discard) like a user who applies the change."
  (push message driver-questions)
  (let ((completing-read-function
         (lambda (_prompt collection &rest _) (if (member "Apply" collection) "Apply" (car collection)))))
    (cl-call-next-method)))

(defun driver-wait (predicate seconds)
  "Process events until PREDICATE holds or SECONDS pass; return PREDICATE's value."
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.1))
    (funcall predicate)))

(defun driver-note (key value)
  (push (cons key value) driver-result))

(defun driver-buffer-fixed (buffer)
  (with-current-buffer buffer
    (save-excursion (goto-char (point-min)) (search-forward "a + b" nil t))))

(defun driver-run ()
  (let* ((buffer (find-file (expand-file-name "calc.py")))
         (_ (apply #'eglot (eglot--guess-contact)))
         (server (or (driver-wait #'eglot-current-server 30) (error "eglot never connected"))))
    (driver-note 'major_mode (symbol-name major-mode))
    (driver-note 'server_command (process-command (jsonrpc--process server)))
    (goto-char (point-min))
    (forward-line 1)
    (forward-char 4)
    (let ((actions (eglot-code-actions (point) (point))))
      (driver-note 'titles (vconcat (mapcar (lambda (a) (plist-get a :title)) actions))))
    (driver-note 'project_root (project-root (project-current)))
    ;; With $E2E_AGENTLS_HINT, "Plan and fix with a hint..." is chosen and the snippet's read-string answered.
    (let* ((hint (getenv "E2E_AGENTLS_HINT"))
           (last-nonmenu-event ?\r)
           (completing-read-function
            (lambda (&rest _) (if hint "Plan and fix with a hint..." "Plan and fix"))))
      (cl-letf (((symbol-function 'read-string)
                 (lambda (prompt &rest _) (driver-note 'hint_prompt prompt) hint)))
        (eglot-code-actions (point) (point) nil t)))
    (driver-wait (lambda () (or (driver-buffer-fixed buffer) driver-run-ended)) 180)
    (driver-wait (lambda () (driver-buffer-fixed buffer)) 2)
    (driver-note 'edit_applied (if (driver-buffer-fixed buffer) t :json-false))
    (driver-note 'buffer (with-current-buffer buffer (buffer-substring-no-properties (point-min) (point-max))))
    (driver-note 'modified (if (buffer-modified-p buffer) t :json-false))
    ;; The snippet's agentls-show-trace puts the (latest) run's trace in *agentls trace*.
    (driver-wait (lambda () driver-run-ended) 30)
    (with-current-buffer buffer (agentls-show-trace))
    (driver-note 'trace (with-current-buffer "*agentls trace*" (buffer-string)))
    ;; agentls-show-report writes the run's HTML report and hands its file to the browser.
    (let* ((opened nil)
           (browse-url-browser-function (lambda (url &rest _) (setq opened url))))
      (with-current-buffer buffer (agentls-show-report))
      (driver-note 'report_url (or opened ""))
      (driver-note 'report_path (or opened "")))
    (eglot-shutdown server)))

(condition-case err
    (driver-run)
  (error (driver-note 'error (error-message-string err))))
(driver-note 'messages (vconcat (reverse driver-messages)))
(driver-note 'questions (vconcat (reverse driver-questions)))
(with-temp-file (getenv "AGENTLS_E2E_OUT")
  (insert (json-encode driver-result)))
(kill-emacs 0)
