/**
 * The failure converter the worker loads into the workflow sandbox (by path) when payload
 * encryption is on: failure messages and stacks travel as an encoded (then encrypted) payload.
 */
import { DefaultFailureConverter } from '@temporalio/common';

/** Loaded by name through `failureConverterPath`. */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
