import { ApplicationFailure } from '@temporalio/workflow';
import type { AgentInput } from '../../shared/agent';
import type { CarriedState } from './carried-state';
import { SIZE_BUDGETS, jsonBytes, overBudgetMessage } from '../../shared/temporal-limits';

/**
 * The state to continue as new with, fitted into one payload with the run's input: built, and
 * while too large built again after each shrink in turn; fails the run (non-retryable, saying by
 * how much) when even the smallest does not fit.
 */
export function fitCarriedState(
  rawInput: AgentInput,
  build: () => CarriedState,
  shrinks: (() => void)[],
): CarriedState {
  let carried = build();
  for (const shrink of shrinks) {
    if (jsonBytes([rawInput, carried]) <= SIZE_BUDGETS.continueAsNewInputBytes) return carried;
    shrink();
    carried = build();
  }
  const bytes = jsonBytes([rawInput, carried]);
  if (bytes > SIZE_BUDGETS.continueAsNewInputBytes) {
    throw ApplicationFailure.create({
      type: 'CarriedStateTooLarge',
      message: overBudgetMessage('The state to continue with', bytes, SIZE_BUDGETS.continueAsNewInputBytes),
      nonRetryable: true,
    });
  }
  return carried;
}
