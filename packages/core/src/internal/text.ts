/**
 * What a string field may hold. Ids, aliases, emails and URLs never hold a control character
 * (`U+0000`–`U+001F`, `U+007F`): they travel in URL paths, headers and log lines, and a NUL
 * cannot be stored in a Postgres text column at all. Free text (names, motives) is refused NUL
 * at the HTTP edge (`@cobro/http`'s boundary), whatever the field.
 */

/** Whether `s` holds a C0 control character or DEL. */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
export const hasControlCharacter = (s: string): boolean => /[\u0000-\u001f\u007f]/.test(s)

/** `local@domain.tld` without whitespace, control characters or a second `@`. */
export const EMAIL_PATTERN =
  // eslint-disable-next-line no-control-regex -- control characters are what it refuses
  /^[^\s@\u0000-\u001f\u007f]+@[^\s@\u0000-\u001f\u007f]+\.[^\s@\u0000-\u001f\u007f]+$/
