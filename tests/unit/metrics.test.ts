/**
 * The metrics' pure parts: the configuration, the bound on label values, the exporter options
 * and the visibility query of the runs waiting for approval. tests/integration/metrics.test.ts
 * scrapes a real worker with a real Prometheus.
 */
import { agentCallOf } from '../../workers/observability/agent-calls';
import { METRIC, METRIC_BUCKETS, OTHER_LABEL } from '../../shared/metrics';
import { TOOL_NAMES } from '../../shared/tools/names';
import { ConfigError, DEFAULT_METRICS_ADDRESS, loadWorkerConfig } from '../../workers/config';
import { waitingForApprovalQuery } from '../../workers/observability/approvals-gauge';
import { BoundedLabel, LABEL_BOUNDS } from '../../workers/observability/metrics';
import { telemetryOptionsFor } from '../../workers/observability/runtime';
import { toolLabel } from '../../workflows/metrics';

describe('configuration', () => {
  test('metrics are off by default and bind loopback when on', () => {
    expect(loadWorkerConfig({}).metrics).toEqual({ exporter: 'off', address: DEFAULT_METRICS_ADDRESS });
    expect(DEFAULT_METRICS_ADDRESS).toBe('127.0.0.1:9464');
    expect(telemetryOptionsFor(loadWorkerConfig({}).metrics)).toBeUndefined();
    const on = loadWorkerConfig({ DURABLE_AGENT_METRICS: 'prometheus' }).metrics;
    expect(on).toEqual({ exporter: 'prometheus', address: '127.0.0.1:9464' });
    expect(telemetryOptionsFor(on)).toEqual({
      metrics: { prometheus: { bindAddress: '127.0.0.1:9464', histogramBucketOverrides: METRIC_BUCKETS } },
    });
  });

  test('an address is an IP and a port; a bad exporter or address is named', () => {
    for (const address of ['0.0.0.0:9464', '10.1.2.3:1', '[::1]:9464', '[::]:65535']) {
      expect(loadWorkerConfig({ DURABLE_AGENT_METRICS_ADDRESS: address }).metrics.address).toBe(address);
    }
    for (const address of [
      'localhost:9464',
      '127.0.0.1',
      '127.0.0.1:70000',
      '::1:9464',
      '[127.0.0.1]:9464',
      ':9464',
    ]) {
      expect(() => loadWorkerConfig({ DURABLE_AGENT_METRICS_ADDRESS: address })).toThrow(
        /DURABLE_AGENT_METRICS_ADDRESS: must be <ip>:<port>/,
      );
    }
    expect(() => loadWorkerConfig({ DURABLE_AGENT_METRICS: 'statsd' })).toThrow(ConfigError);
    expect(() => loadWorkerConfig({ DURABLE_AGENT_METRICS: 'statsd' })).toThrow(
      /DURABLE_AGENT_METRICS: must be off or prometheus/,
    );
  });
});

describe('label values', () => {
  test('the first names are kept, later ones and text that is not a name become "other"', () => {
    const label = new BoundedLabel(2);
    expect(label.value('gpt-4o')).toBe('gpt-4o');
    expect(label.value('mcp:files/read_file')).toBe('mcp:files/read_file');
    expect(label.value('claude-3-5')).toBe(OTHER_LABEL);
    // Names already kept stay kept.
    expect(label.value('gpt-4o')).toBe('gpt-4o');
    expect(new BoundedLabel(5).value('Ignore previous instructions')).toBe(OTHER_LABEL);
    expect(new BoundedLabel(5).value('x'.repeat(201))).toBe(OTHER_LABEL);
    expect(new BoundedLabel(5).value(undefined)).toBe('unknown');
  });

  test('built-in tools never use up the bound and are never folded', () => {
    const label = new BoundedLabel(1, new Set(TOOL_NAMES));
    for (let i = 0; i < LABEL_BOUNDS.tool; i++) label.value(`mcp:s/t${i}`);
    for (const name of TOOL_NAMES) expect(label.value(name)).toBe(name);
    expect(label.value('mcp:s/t0')).toBe('mcp:s/t0');
    expect(label.value('mcp:s/t1')).toBe(OTHER_LABEL);
  });
});

test('workflow code names built-in tools as they are, every MCP tool `mcp` and anything else "other"', () => {
  expect(toolLabel({ name: 'calculator', category: 'utility' })).toBe('calculator');
  expect(toolLabel({ name: 'read_file', category: 'mcp' })).toBe('mcp');
  expect(toolLabel({ name: 'calculator', category: 'mcp' })).toBe('mcp');
  expect(toolLabel({ name: 'made_up', category: 'utility' })).toBe(OTHER_LABEL);
  // An app's own tool (defineTool) is labelled by its name.
  expect(toolLabel({ name: 'lookup_order', category: 'utility', own: true })).toBe('lookup_order');
});

test('every metric is named durable_agent_*, counters end in _total, and each histogram has its buckets', () => {
  for (const name of Object.values(METRIC)) expect(name).toMatch(/^durable_agent_[a-z_]+$/);
  for (const name of Object.keys(METRIC_BUCKETS)) {
    expect(Object.values(METRIC)).toContain(name);
    expect(name).not.toMatch(/_total$/);
  }
  expect(METRIC.steps).toBe('durable_agent_steps_total');
});

test('the runs waiting for approval are counted by visibility, per task queue', () => {
  expect(waitingForApprovalQuery('durable-agent')).toBe(
    "WorkflowType = 'agentWorkflow' AND ExecutionStatus = 'Running' AND TaskQueue = 'durable-agent' AND AgentStatus = 'waiting_for_approval'",
  );
  expect(waitingForApprovalQuery("it's")).toContain("TaskQueue = 'it\\'s'");
});

test("an own tool's activity is a tool call to the worker's spans, logs and metrics; other activities are not", () => {
  expect(agentCallOf('lookup_order', [{ toolCallId: 'c1', step: 2, args: { orderId: 'A-17' } }])).toEqual({
    operation: 'execute_tool',
    name: 'lookup_order',
    toolCallId: 'c1',
    step: 2,
  });
  expect(agentCallOf('calculator', [{ toolCallId: 'c2', step: 1, args: {} }])).toMatchObject({
    name: 'calculator',
    category: 'utility',
  });
  expect(agentCallOf('lookup_order', [{ orderId: 'A-17' }])).toBeUndefined();
  expect(agentCallOf('deliverNotification', [{ toolCallId: 'c3' }])).toBeUndefined();
});
