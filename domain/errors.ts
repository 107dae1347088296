/**
 * The errors of the domain: plain classes with no HTTP status. `domain/` rules that read request
 * bodies throw `InvalidRequestError` (a stable code and the JSON pointers of the fields); `db/`
 * and `infra/` throw the other domain errors below (no request JSON pointer: an `InputField`).
 * `toApiError` (`api/app.ts`) maps each to the API's `ApiError` (`api/errors.ts`), in one place.
 */
export interface ErrorDetail {
  path: string;
  message: string;
}

/**
 * The request asks for something its own content rules out (a condition on an unknown field, a
 * slice without the `pronet` it needs): 400 with the stable `code`; `details` name the fields by
 * JSON pointer. Thrown by the `domain/` rules that read request bodies.
 */
export class InvalidRequestError extends Error {
  override name = 'InvalidRequestError';
  constructor(
    readonly code: string,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message);
  }
}

export const badRequest = (code: string, message: string, details?: ErrorDetail[]) => new InvalidRequestError(code, message, details);

/** A key as one token of a JSON pointer (RFC 6901: `~` → `~0`, `/` → `~1`). */
export const escapePointer = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** 400 `validation_failed` naming the offending field by JSON pointer. */
export const invalidField = (path: string, message: string) => new InvalidRequestError('validation_failed', `${path}: ${message}`, [{ path, message }]);

/** A field of the input that an error names, as path segments (`['emails', 2]`); `api/` writes it as a JSON pointer. */
export type InputField = readonly (string | number)[];

/** Base of the errors `db/` throws for something the caller asked that cannot be done. */
export class DomainError extends Error {
  override name = 'DomainError';
}

/** The resource does not exist in the caller's workspace (a foreign one looks the same). */
export class NotFoundError extends DomainError {
  constructor(
    readonly label: string,
    readonly id?: string,
  ) {
    super(id ? `${label} ${id} was not found` : `${label} was not found`);
  }
}

/** A value of the input is refused: `problem` says why (`must be a profile URL`). */
export class InvalidInputError extends DomainError {
  constructor(
    readonly field: InputField,
    readonly problem: string,
  ) {
    super(`${field.join('.')}: ${problem}`);
  }
}

/**
 * A well-formed reference in the input (an uploaded file, a source, an integration) names nothing
 * of the workspace: 404 naming the field, like a missing path resource.
 */
export class UnknownReferenceError extends DomainError {
  constructor(
    readonly field: InputField,
    readonly problem: string,
  ) {
    super(`${field.join('.')}: ${problem}`);
  }
}

/** The change clashes with what is stored (a unique identity taken by another row); `code` is the stable error code. */
export class ConflictError extends DomainError {
  constructor(
    message: string,
    readonly code = 'conflict',
  ) {
    super(message);
  }
}

/** The workspace's balance cannot cover the debit; nothing was charged. */
export class InsufficientCreditsError extends DomainError {
  constructor(
    readonly needed: number,
    readonly balance: number,
  ) {
    super(`This request needs ${needed} credits; the balance is ${balance}`);
  }
}

/** The bytes are of a type that is not accepted (`detected` undefined: not recognised). */
export class UnsupportedMediaTypeError extends DomainError {
  constructor(
    readonly field: InputField,
    readonly detected: string | undefined,
    readonly allowed: readonly string[],
    /** Why, when the refusal is of the declared type rather than of the bytes. */
    reason?: string,
  ) {
    super(reason ?? (detected ? `detected type ${detected}` : 'the content type could not be recognised'));
  }
}

/** A file's bytes are of another type than the one its part declares. */
export class TypeMismatchError extends DomainError {
  constructor(
    readonly field: InputField,
    readonly declared: string,
    readonly detected: string,
  ) {
    super(`the part declares ${declared} but its bytes are ${detected}`);
  }
}

/** A body or file exceeds its size limit. */
export class TooLargeError extends DomainError {
  constructor(
    readonly maxBytes: number,
    readonly what = 'File',
  ) {
    super(`${what} exceeds the limit of ${maxBytes} bytes`);
  }
}

/** A URL of the input that the outbound guard refuses (a private address, not http(s) …): `reason` says why. */
export class UrlNotAllowedError extends DomainError {
  constructor(
    readonly field: InputField,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** A file could not be fetched from the URL of the input (no answer, a status other than 2xx). */
export class ImportFailedError extends DomainError {
  constructor(
    readonly field: InputField,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** Assembled chunks hold a type whose extension is not the one the input names. */
export class ExtensionMismatchError extends DomainError {
  constructor(
    readonly field: InputField,
    readonly detected: string,
    readonly storedAs: string,
    readonly wanted: string,
  ) {
    super(`the chunks hold ${detected}, which is stored as .${storedAs}, not .${wanted}`);
  }
}

/**
 * The domain errors an activity refuses its input with cross to the API as a non-retryable
 * `ApplicationFailure` of type {@link DOMAIN_ERROR_FAILURE} whose one detail is this plain form;
 * {@link domainErrorFromData} rebuilds the error, which the API maps like any other.
 */
export const DOMAIN_ERROR_FAILURE = 'DomainError';
export type DomainErrorData =
  | { kind: 'InvalidInput'; field: InputField; problem: string }
  | { kind: 'UnknownReference'; field: InputField; problem: string }
  | { kind: 'UnsupportedMediaType'; field: InputField; detected: string | undefined; allowed: readonly string[] }
  | { kind: 'TooLarge'; maxBytes: number; what: string }
  | { kind: 'UrlNotAllowed'; field: InputField; reason: string }
  | { kind: 'ImportFailed'; field: InputField; reason: string }
  | { kind: 'ExtensionMismatch'; field: InputField; detected: string; storedAs: string; wanted: string };

/** The plain form of a domain error an activity may refuse with; undefined for any other error. */
export function domainErrorData(e: unknown): DomainErrorData | undefined {
  if (e instanceof InvalidInputError) return { kind: 'InvalidInput', field: e.field, problem: e.problem };
  if (e instanceof UnknownReferenceError) return { kind: 'UnknownReference', field: e.field, problem: e.problem };
  if (e instanceof UnsupportedMediaTypeError) return { kind: 'UnsupportedMediaType', field: e.field, detected: e.detected, allowed: e.allowed };
  if (e instanceof TooLargeError) return { kind: 'TooLarge', maxBytes: e.maxBytes, what: e.what };
  if (e instanceof UrlNotAllowedError) return { kind: 'UrlNotAllowed', field: e.field, reason: e.reason };
  if (e instanceof ImportFailedError) return { kind: 'ImportFailed', field: e.field, reason: e.reason };
  if (e instanceof ExtensionMismatchError) return { kind: 'ExtensionMismatch', field: e.field, detected: e.detected, storedAs: e.storedAs, wanted: e.wanted };
  return undefined;
}

export function domainErrorFromData(d: DomainErrorData): DomainError {
  switch (d.kind) {
    case 'InvalidInput':
      return new InvalidInputError(d.field, d.problem);
    case 'UnknownReference':
      return new UnknownReferenceError(d.field, d.problem);
    case 'UnsupportedMediaType':
      return new UnsupportedMediaTypeError(d.field, d.detected, d.allowed);
    case 'TooLarge':
      return new TooLargeError(d.maxBytes, d.what);
    case 'UrlNotAllowed':
      return new UrlNotAllowedError(d.field, d.reason);
    case 'ImportFailed':
      return new ImportFailedError(d.field, d.reason);
    case 'ExtensionMismatch':
      return new ExtensionMismatchError(d.field, d.detected, d.storedAs, d.wanted);
  }
}

/** The workspace's credit account stayed locked by other credit movements past the wait allowed; nothing changed, retry. */
export class CreditAccountBusyError extends DomainError {
  constructor(readonly retryAfterSeconds: number) {
    super('Other requests of this workspace are moving credits right now; retry shortly');
  }
}

/** The discovery search engine (OpenSearch) could not answer: unreachable, timed out, overloaded or its index missing. Nothing was charged; retry. */
export class SearchUnavailableError extends DomainError {
  constructor(readonly retryAfterSeconds: number, options?: { cause?: unknown }) {
    super('The discovery search engine is unavailable right now; retry shortly', options);
  }
}
