import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';

/** Decodes the payloads of an event field (JSON, as this project's workers write them). */
export function decodePayloads(payloads: temporal.api.common.v1.IPayloads | null | undefined): unknown[] {
  return (payloads?.payloads ?? []).map((p) => {
    try {
      return defaultPayloadConverter.fromPayload(p);
    } catch {
      return '(undecodable payload)';
    }
  });
}
