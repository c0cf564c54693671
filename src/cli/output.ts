/** The CLI prints only JSON on stdout (CONTRACT A.1); logs and progress go to stderr. */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

export function printError(code: string, message: string, extra: Record<string, unknown> = {}): void {
  process.stdout.write(JSON.stringify({ error: code, message, ...extra }, null, 2) + '\n');
}

export function progress(message: string): void {
  process.stderr.write(message + '\n');
}
