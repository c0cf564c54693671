/**
 * The domain's error: raised by every domain normalizer/validator when input is rejected. It lives in
 * src/errors.ts, the bottom of the service (which imports nothing above it); domain code imports it from here.
 */
export { DomainError } from '../errors.js';
