/* People-facing words: field paths as the editor labels them, states, and how a
 * value of a field reads in a sentence (the merge panel, the adjudication table). */
import { html } from "./lib.js";

export const FIELD_LABELS = {
  start_time: "Start time",
  end_time: "End time",
  primary_speaker: "Speaker",
  dialogue_cleaned: "Words",
  row_index: "Row number",
  target: "Target",
  utterance_type: "Utterance type",
  background_dialogue: "Background dialogue",
  tone_of_voice: "Tone of voice",
  body_posture: "Body posture",
  facial_expressions: "Facial expression",
  self_directed_behavior: "Self-directed behaviour",
  interaction_behavior: "Interaction behaviour",
  internal_emotion: "Internal emotion",
  viewpoints_attitudes: "Viewpoint",
  support_strategy: "Support strategy",
  relation_pattern: "Relation pattern",
  relation_pattern_reason: "Reason for the pattern",
  relation_pattern_evidence_rows: "Evidence rows",
  relation_cycle_state: "Relation pattern",
  relation_cycle_reason: "Reason for the pattern",
  relation_cycle_evidence_rows: "Evidence rows",
};

// Keys inside list entries, as the editor labels them.
const ENTRY_LABELS = {
  person: "person",
  description: "description",
  speaker: "speaker",
  target: "toward",
  content: "words",
  initiator: "initiator",
  emotion_description: "emotion",
  intensity: "intensity",
  source: "source",
  viewpoint: "viewpoint",
  attitude: "attitude",
  provider: "provider",
  strategy_type: "strategy",
  strategy_content: "what the therapist does",
};

/** `internal_emotion[0].intensity` -> `Internal emotion #1 · intensity`; `relation_pattern_evidence_rows[2]` -> `Evidence rows #3`. */
export function describePath(path) {
  if (!path) return "";
  const parts = path.match(/[^.[\]]+|\[\d+\]/g) || [];
  const out = [];
  for (const part of parts) {
    if (part.startsWith("[")) {
      if (out.length) out[out.length - 1] += ` #${parseInt(part.slice(1), 10) + 1}`;
    } else if (!out.length) out.push(FIELD_LABELS[part] || part.replace(/_/g, " "));
    else out.push(ENTRY_LABELS[part] || part.replace(/_/g, " "));
  }
  return out.join(" · ");
}

// The states of clips, assignments and revisions come with the page (config.state_words: the labels on the
// server's state choices, the one wording of every page); these are the editor's own states of a row in this browser.
const STATES = {
  unsaved: "unsaved",
  saving: "saving…",
  failed: "not saved",
  from_empty: "calibration (starts empty)",
  from_draft: "starts from the LLM draft",
};
/** Take the server's state words (called once by each page with its config). */
export function setStateWords(words) {
  Object.assign(STATES, words || {});
}
export const stateWords = (state) => STATES[state] || String(state || "").replace(/_/g, " ");

const people = (list) => (list || []).join(", ") || "nobody";

/** One entry of a list field as a short sentence. */
export function entryText(key, e) {
  switch (key) {
    case "background_dialogue":
      return `${e.speaker || "?"} → ${people(e.target)}: “${e.content}”`;
    case "interaction_behavior":
      return `${e.initiator || "?"} → ${people(e.target)}: ${e.description}`;
    case "internal_emotion":
      return `${e.person || "?"}: ${e.emotion_description} (${e.intensity ?? "no intensity"})`;
    case "viewpoints_attitudes":
      return `${e.source || "?"} → ${e.target || "?"}: ${e.viewpoint}; ${e.attitude}`;
    case "support_strategy":
      return `${e.strategy_type || "?"} → ${people(e.target)}: ${e.strategy_content}`;
    default:
      return `${e.person || "?"}: ${e.description}`;
  }
}

/** A value of a document key, readable (a vnode). */
export function valueView(key, value) {
  if (value === undefined) return html`<span class="none">(absent)</span>`;
  if (value === null) return html`<span class="none">not annotated</span>`;
  if (key === "target") return html`<span>${people(value)}</span>`;
  if (key.endsWith("evidence_rows")) return value.length ? html`<span>rows ${value.join(", ")}</span>` : html`<span class="none">none</span>`;
  if (key === "relation_pattern" || key === "relation_cycle_state") return value === "" ? html`<span>no clear pattern</span>` : html`<b>${value}</b>`;
  if (Array.isArray(value)) {
    if (!value.length) return html`<span class="none">none</span>`;
    if (value.length === 1) return html`<span>${entryText(key, value[0])}</span>`;
    return html`<ul class="entries">${value.map((e, i) => html`<li key=${i}>${entryText(key, e)}</li>`)}</ul>`;
  }
  if (value === "") return html`<span class="none">empty</span>`;
  return html`<span>${String(value)}</span>`;
}
