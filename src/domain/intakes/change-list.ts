import type { IntakeContent, IntakeField } from "../../db/schema";
import { normalizeField } from "./registration";

/**
 * The question-by-question change list of an intake against the version the owner approved: after a partner's PATCH
 * the owner sees exactly what changed before switching it on again (docs/intakes.md, The change list, which also
 * explains how moves are found).
 */

const QUESTION_PROPERTIES = ["label", "type", "required", "options", "help"] as const;
type QuestionProperty = (typeof QUESTION_PROPERTIES)[number];

export type QuestionChange =
  | { change: "added"; id: string; index: number; question: IntakeField }
  | { change: "removed"; id: string; index: number; question: IntakeField }
  | {
      change: "changed";
      id: string;
      index: number;
      properties: Array<{ property: QuestionProperty; before: unknown; after: unknown }>;
    }
  | { change: "moved"; id: string; from: number; to: number };

export type ChangeList = {
  /** The approved version the current one is compared with. */
  sinceVersion: number;
  title: { before: string; after: string } | null;
  description: { before: string; after: string } | null;
  questions: QuestionChange[];
};

/**
 * The change question by question, which the owner reviews (docs/intakes.md, The change list): questions are
 * matched by id. In the order of the current list: each question added, changed (which properties,
 * before and after) and/or moved (old index → new index); then the removed ones, in their old order. "Moved" means
 * the question's place among the questions kept changed: the fewest moves that explain the new order, so adding or
 * removing a question does not make every later one "moved".
 */
export function changeList(approved: IntakeContent, current: IntakeContent, sinceVersion: number): ChangeList {
  const before = approved.fields.map(normalizeField);
  const after = current.fields.map(normalizeField);
  const oldIndex = new Map(before.map((field, index) => [field.id, index]));
  const newIds = new Set(after.map((field) => field.id));
  const kept = after.filter((field) => oldIndex.has(field.id)).map((field) => field.id);
  const staying = longestInOrder(kept.map((id) => oldIndex.get(id) ?? 0)).map((position) => kept[position]);
  const stayed = new Set(staying);

  const questions: QuestionChange[] = [];
  after.forEach((field, index) => {
    const from = oldIndex.get(field.id);
    const previous = from === undefined ? undefined : before[from];
    if (from === undefined || previous === undefined) {
      questions.push({ change: "added", id: field.id, index, question: field });
      return;
    }
    const properties = QUESTION_PROPERTIES.filter(
      (property) => JSON.stringify(previous[property] ?? null) !== JSON.stringify(field[property] ?? null),
    ).map((property) => ({ property, before: previous[property] ?? null, after: field[property] ?? null }));
    if (properties.length > 0) questions.push({ change: "changed", id: field.id, index, properties });
    if (!stayed.has(field.id)) questions.push({ change: "moved", id: field.id, from, to: index });
  });
  before.forEach((field, index) => {
    if (!newIds.has(field.id)) questions.push({ change: "removed", id: field.id, index, question: field });
  });

  return {
    sinceVersion,
    title: approved.title === current.title ? null : { before: approved.title, after: current.title },
    description:
      approved.description === current.description
        ? null
        : { before: approved.description, after: current.description },
    questions,
  };
}

/**
 * Positions of a longest strictly increasing subsequence of `values` (the questions that kept their relative
 * order). At most 12 questions, so the quadratic method is plenty. Of equally long ones, the first found is kept:
 * the questions that come first in the current list stay put (of two that swapped, the second one "moved").
 */
function longestInOrder(values: number[]): number[] {
  const length = values.map(() => 1);
  const previous = values.map(() => -1);
  for (let i = 0; i < values.length; i++) {
    for (let j = 0; j < i; j++) {
      if ((values[j] ?? 0) < (values[i] ?? 0) && (length[j] ?? 0) + 1 > (length[i] ?? 0)) {
        length[i] = (length[j] ?? 0) + 1;
        previous[i] = j;
      }
    }
  }
  let end = -1;
  for (let i = 0; i < values.length; i++) if (end === -1 || (length[i] ?? 0) > (length[end] ?? 0)) end = i;
  const positions: number[] = [];
  for (let i = end; i !== -1; i = previous[i] ?? -1) positions.unshift(i);
  return positions;
}
