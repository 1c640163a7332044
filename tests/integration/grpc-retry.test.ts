/**
 * The client connection's retry interceptor (workers/grpc-retry.ts) on a real dev server. Under it, a
 * stand-in for a flaky network fails chosen attempts with a transient status before they leave the
 * process. The SDK's own retry interceptor fails the first case: the call never settles and
 * "savedMessageNext is not a function" is thrown from a timer (in CI it hung the web UI's queries
 * and failed a test file after its tests had passed).
 */
import type { Interceptor, NextCall, StatusObject } from '@grpc/grpc-js';
import { InterceptingCall, Metadata, status } from '@grpc/grpc-js';
import type { GrpcRetryOptions } from '@temporalio/client';
import { Client, Connection, isGrpcServiceError } from '@temporalio/client';
import { retryInterceptor } from '../../workers/grpc-retry';
import type { DevServerFixture } from '../../testkit/dev-server';
import { startDevServerFixture } from '../../testkit/dev-server';

let fx: DevServerFixture;
const uncaught: unknown[] = [];
const onUncaught = (err: unknown) => uncaught.push(err);

beforeAll(async () => {
  fx = await startDevServerFixture();
  process.on('uncaughtException', onUncaught);
});
afterAll(async () => {
  process.off('uncaughtException', onUncaught);
  await fx?.stop();
});
afterEach(() => expect(uncaught).toEqual([]));

/** Fails the next `failures()` attempts with UNAVAILABLE, as a dropped connection does. */
function flaky(failures: () => number, seen: string[]): Interceptor {
  return (options, nextCall) => {
    if (failures() <= 0) {
      seen.push('sent');
      return new InterceptingCall(nextCall(options));
    }
    seen.push('failed');
    const failed: ReturnType<NextCall> = {
      start: (_metadata, listener) =>
        setImmediate(() =>
          listener?.onReceiveStatus?.({
            code: status.UNAVAILABLE,
            details: 'connection dropped (test)',
            metadata: new Metadata(),
          }),
        ),
      cancelWithStatus: () => undefined,
      getPeer: () => 'flaky',
      sendMessageWithContext: () => undefined,
      sendMessage: () => undefined,
      startRead: () => undefined,
      halfClose: () => undefined,
      getAuthContext: () => null,
    };
    return new InterceptingCall(failed);
  };
}

/** Temporal's retry decisions, with short waits so a test does not sit out real backoff. */
const quick = (maxAttempts: number, delayMs = 20): GrpcRetryOptions => ({
  retryableDecider: (attempt: number, s: StatusObject) =>
    attempt < maxAttempts && s.code === status.UNAVAILABLE,
  delayFunction: () => delayMs,
});

async function settles<T>(p: Promise<T>, ms = 10_000): Promise<{ value?: T; error?: unknown }> {
  return Promise.race([
    p.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    ),
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`the call did not settle in ${ms} ms`)), ms),
    ),
  ]);
}

test('a call whose first attempt failed gets the reply of the attempt that succeeded', async () => {
  const seen: string[] = [];
  let failures = 1;
  const connection = await Connection.connect({
    address: fx.address,
    interceptors: [retryInterceptor(quick(5)), flaky(() => failures--, seen)],
  });
  try {
    failures = 1;
    seen.length = 0;
    const { value, error } = await settles(connection.workflowService.getSystemInfo({}));
    expect(error).toBeUndefined();
    expect(value?.serverVersion).toMatch(/\d+\.\d+/);
    expect(seen).toEqual(['failed', 'sent']);
    // Through the client too: the first attempt of describing the namespace fails, the second answers.
    failures = 1;
    const described = await settles(
      new Client({ connection }).workflowService.describeNamespace({ namespace: 'default' }),
    );
    expect(described.value?.namespaceInfo?.name).toBe('default');
  } finally {
    await connection.close();
  }
}, 30_000);

test('a call that fails every attempt ends with the last status after the allowed attempts', async () => {
  const seen: string[] = [];
  let failing = false;
  const connection = await Connection.connect({
    address: fx.address,
    interceptors: [retryInterceptor(quick(3)), flaky(() => (failing ? 1 : 0), seen)],
  });
  try {
    failing = true;
    seen.length = 0;
    const { error } = await settles(connection.workflowService.getSystemInfo({}));
    expect(isGrpcServiceError(error) && error.code).toBe(status.UNAVAILABLE);
    expect(seen).toEqual(['failed', 'failed', 'failed']);
  } finally {
    await connection.close();
  }
}, 30_000);

test('a status that is not transient is not retried', async () => {
  const seen: string[] = [];
  const connection = await Connection.connect({
    address: fx.address,
    interceptors: [retryInterceptor(quick(5)), flaky(() => 0, seen)],
  });
  try {
    seen.length = 0;
    const { error } = await settles(
      connection.workflowService.describeWorkflowExecution({
        namespace: 'default',
        execution: { workflowId: 'no-such-run' },
      }),
    );
    expect(isGrpcServiceError(error) && error.code).toBe(status.NOT_FOUND);
    expect(seen).toEqual(['sent']);
  } finally {
    await connection.close();
  }
}, 30_000);

test('a call waiting for its next attempt when the connection closes ends as CANCELLED', async () => {
  const seen: string[] = [];
  let failures = 0;
  const connection = await Connection.connect({
    address: fx.address,
    interceptors: [retryInterceptor(quick(5, 500)), flaky(() => failures--, seen)],
  });
  failures = 1; // the first attempt fails; the second would be sent, on a closed connection
  const call = settles(connection.workflowService.getSystemInfo({}));
  await new Promise((r) => setTimeout(r, 100));
  await connection.close();
  const { error } = await call;
  expect(isGrpcServiceError(error) && error.code).toBe(status.CANCELLED);
  expect(isGrpcServiceError(error) && error.details).toMatch(/connection was closed before attempt 2/);
  // Nothing is thrown later from the timer of an attempt that never started.
  await new Promise((r) => setTimeout(r, 700));
}, 30_000);

test('a call cancelled while it waits for its next attempt ends then, and starts no other', async () => {
  const seen: string[] = [];
  let failing = false;
  const connection = await Connection.connect({
    address: fx.address,
    interceptors: [retryInterceptor(quick(5, 2_000)), flaky(() => (failing ? 1 : 0), seen)],
  });
  try {
    failing = true;
    seen.length = 0;
    const controller = new AbortController();
    const started = Date.now();
    const call = settles(
      connection.withAbortSignal(controller.signal, () => connection.workflowService.getSystemInfo({})),
    );
    setTimeout(() => controller.abort(), 100);
    const { error } = await call;
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(isGrpcServiceError(error) && error.code).toBe(status.CANCELLED);
    await new Promise((r) => setTimeout(r, 2_500));
    expect(seen).toEqual(['failed']);
  } finally {
    await connection.close();
  }
}, 30_000);
