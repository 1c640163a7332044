import { ApplicationFailure } from '@temporalio/workflow';
import type { AgentInput, CarriedState } from '../../shared/agent';
import { BUDGETS, jsonBytes, overBudgetMessage } from '../../shared/budgets';

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
    if (jsonBytes([rawInput, carried]) <= BUDGETS.continueAsNewInputBytes) return carried;
    shrink();
    carried = build();
  }
  const bytes = jsonBytes([rawInput, carried]);
  if (bytes > BUDGETS.continueAsNewInputBytes) {
    throw ApplicationFailure.create({
      type: 'CarriedStateTooLarge',
      message: overBudgetMessage('The state to continue with', bytes, BUDGETS.continueAsNewInputBytes),
      nonRetryable: true,
    });
  }
  return carried;
}
