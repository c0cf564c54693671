/** UTC ISO-8601 with milliseconds, the one timestamp format of the API and the database. */
export function nowIso(): string {
  return new Date().toISOString();
}
