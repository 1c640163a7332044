import type { CallModelInput, CallModelOutput } from '../shared/model';
import type { ToolActivityInput, ToolResult } from '../shared/tools/define';

/** The model activity, as workflows see it. */
export interface ModelActivities {
  callModel(input: CallModelInput): Promise<CallModelOutput>;
}

/** Shape of every tool activity; registered under the tool's name. */
export type ToolActivity = (input: ToolActivityInput<unknown>) => Promise<ToolResult>;
