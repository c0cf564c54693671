/**
 * Raised by every domain normalizer/validator when input is rejected.
 * The message is short and human ("must be a valid e-mail address"); the caller
 * knows the field path and maps it to 400 `validation_failed`.
 */
export class DomainError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DomainError';
  }
}
