/**
 * The status bar's words for a finished run, from the server's `$/progress` end message (no `vscode`
 * import: plain Node, tested on its own). The server ends a run's progress with its outcome and, when
 * it called a model, what it spent: "fixed: ... (1,234 tokens (1,000 prompt, 234 completion) in 3
 * model calls, $0.0004)" becomes "fixed · 1,234 tokens · $0.0004".
 */

/** The outcome (the end message's first word or words, before a colon) and the tokens and price it names. */
export function endSummary(message: string | undefined): string {
  const text = (message ?? "").trim();
  const outcome = text.split(/[:(\n]/, 1)[0].trim() || "ended";
  const tokens = [...text.matchAll(/([\d,]+) tokens\b/g)].pop();
  const price = /\$(\d+(?:\.\d+)?)\)?\s*$/.exec(text);
  const parts = [outcome];
  if (tokens !== undefined) {
    parts.push(`${tokens[1]} tokens`);
  }
  if (price !== null) {
    parts.push(`$${price[1]}`);
  }
  return parts.join(" · ");
}
