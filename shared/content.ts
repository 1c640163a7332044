/**
 * References into the content store: how large content (tool results, the conversation) travels
 * through Temporal by reference instead of by value. The store is content-addressed and
 * write-once — a reference is the SHA-256 of the stored JSON — so retries, replays and several
 * workers writing the same content all agree, and a reference can never point at changed data.
 *
 * Pure types and helpers (no Node built-ins): workflow code imports them.
 */
import { utf8Bytes, utf8Prefix } from './temporal-limits';

/** A reference to stored content: `sha256:` and 64 hex digits of the SHA-256 of its JSON bytes. */
export type ContentRef = `sha256:${string}`;

const REF_PATTERN = /^sha256:[0-9a-f]{64}$/;

/** Whether a value is a well-formed {@link ContentRef}. */
export function isContentRef(value: unknown): value is ContentRef {
  return typeof value === 'string' && REF_PATTERN.test(value);
}

/** A text kept in the content store: history keeps the reference, its size and a short preview. */
export interface TextRef {
  ref: ContentRef;
  /** UTF-8 length of the whole text. */
  bytes: number;
  /** The beginning of the text, for transcripts and UIs that do not read the store. */
  preview: string;
}

/** A text kept by value (small) or by reference (large). */
export type StoredText = string | TextRef;

/** Whether a stored text is a reference. */
export function isTextRef(value: unknown): value is TextRef {
  return (
    typeof value === 'object' &&
    value !== null &&
    isContentRef((value as { ref?: unknown }).ref) &&
    typeof (value as { bytes?: unknown }).bytes === 'number' &&
    typeof (value as { preview?: unknown }).preview === 'string'
  );
}

/** The beginning of a text within `maxBytes`, marked with `…` when cut. */
export function previewOf(text: string, maxBytes: number): string {
  if (utf8Bytes(text) <= maxBytes) return text;
  return `${utf8Prefix(text, Math.max(0, maxBytes - 3))}…`;
}

/** What a stored text shows without the store: the text itself, or its preview and size. */
export function storedTextPreview(text: StoredText): string {
  return typeof text === 'string' ? text : text.preview;
}

/** UTF-8 size of a stored text's full content. */
export function storedTextBytes(text: StoredText): number {
  return typeof text === 'string' ? utf8Bytes(text) : text.bytes;
}
