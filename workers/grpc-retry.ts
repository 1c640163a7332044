import type { Interceptor, Listener, StatusObject } from '@grpc/grpc-js';
import { InterceptingCall, Metadata, RequesterBuilder, status } from '@grpc/grpc-js';
import type { GrpcRetryOptions } from '@temporalio/client';
import { defaultGrpcRetryOptions } from '@temporalio/client';

/**
 * Retries a client call that failed with a transient gRPC status, with Temporal's own policy
 * (`defaultGrpcRetryOptions`: which statuses, how many attempts, how long between them), and always
 * ends the call: with the last attempt's reply, or with its status.
 *
 * The SDK's own retry interceptor (its default for `Connection.connect`) ends a call whose first
 * attempt failed and a later attempt ended by calling a function that only a reply to the *first*
 * attempt sets: it throws "savedMessageNext is not a function" from a timer (an uncaught exception
 * that stops a Node process) and the call never settles (a query behind an HTTP request waits for
 * ever). So every client connection of the project uses this one.
 *
 * Also: an attempt that cannot start because the connection was closed meanwhile ends the call as
 * CANCELLED (instead of "Channel has been shut down" thrown from the retry's timer), and a call
 * cancelled while it waits for its next attempt (a deadline, an abort) starts none.
 */
export function retryInterceptor(options: GrpcRetryOptions = defaultGrpcRetryOptions()): Interceptor {
  return (callOptions, nextCall) => {
    let request: unknown;
    let cancelled = false;
    let timer: NodeJS.Timeout | undefined;
    let current: ReturnType<typeof nextCall> | undefined;
    // Set when the call starts: ends it upward, once.
    let end: (final: StatusObject) => void = () => undefined;
    const requester = new RequesterBuilder()
      .withStart((metadata, upper, next) => {
        let attempt = 1;
        let reply: { message: unknown } | undefined;
        let ended = false;
        end = (final) => {
          if (ended) return;
          ended = true;
          if (reply && final.code === status.OK) upper.onReceiveMessage(reply.message);
          upper.onReceiveStatus(final);
        };
        const settle = (result: StatusObject) => {
          if (!cancelled && result.code !== status.OK && options.retryableDecider(attempt, result)) {
            timer = setTimeout(retry, options.delayFunction(attempt, result));
          } else {
            end(result);
          }
        };
        const retry = () => {
          timer = undefined;
          if (cancelled) return;
          attempt++;
          reply = undefined;
          try {
            current = nextCall(callOptions);
          } catch (err) {
            end({
              code: status.CANCELLED,
              details: `the connection was closed before attempt ${attempt}: ${(err as Error).message}`,
              metadata: new Metadata(),
            });
            return;
          }
          current.start(metadata, {
            onReceiveMetadata: () => undefined,
            onReceiveMessage: (message: unknown) => {
              reply = { message };
            },
            onReceiveStatus: settle,
          });
          current.sendMessage(request);
          current.halfClose();
        };
        const first: Listener = {
          onReceiveMessage: (message: unknown) => {
            reply = { message };
          },
          onReceiveStatus: (result: StatusObject) => settle(result),
        };
        next(metadata, first);
      })
      .withSendMessage((message, next) => {
        request = message;
        next(message);
      })
      .withCancel((next) => {
        cancelled = true;
        if (timer !== undefined) {
          // Waiting for the next attempt: no attempt runs that could end the call, so end it here.
          clearTimeout(timer);
          timer = undefined;
          end({ code: status.CANCELLED, details: 'Cancelled on client', metadata: new Metadata() });
          return;
        }
        if (current) current.cancelWithStatus(status.CANCELLED, 'Cancelled on client');
        else next();
      })
      .build();
    return new InterceptingCall(nextCall(callOptions), requester);
  };
}
