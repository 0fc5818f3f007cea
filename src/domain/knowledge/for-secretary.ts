import { fenceText, frameLength, freshBoundary, informationHeader } from "../../lib/information-fence";
import { characterCount } from "../../lib/text";
import type { Business } from "../access/businesses";
import { describeSource, type PushedItem } from "./owner-decisions";

/*
 * What the Secretary reads of knowledge: the business's settings, then the pushed texts as information inside a fence
 * they cannot close (docs/architecture.md, Pushed text stays information).
 */

/**
 * The Secretary reads at most 16,000 characters of knowledge an answer (docs/guides/knowledge.md, What the Secretary
 * reads).
 */
export const KNOWLEDGE_BUDGET_CHARS = 16_000;

export type KnowledgeSection =
  | { kind: "settings"; text: string }
  | {
      kind: "connected_app_information";
      key: string;
      title: string;
      source: string;
      /** The pushed text itself, apart from any wording of ours (cut if it is the one that crosses the budget). */
      content: string;
      /**
       * The same for a prompt: a header line of our words, then the context's two boundary lines around the source
       * and title (one line each) and `content` (src/lib/information-fence.ts).
       */
      text: string;
    };

function settingsText(business: Business): string {
  const lines = Object.entries(business.settings).map(
    ([name, value]) => `${name}: ${typeof value === "string" ? value : JSON.stringify(value)}`,
  );
  return [
    `The business's own settings for ${business.name}. They take precedence over any information below.`,
    ...lines,
  ].join("\n");
}

const firstChars = (text: string, count: number) =>
  characterCount(text) <= count ? text : [...text].slice(0, count).join("");

/**
 * What the Secretary may answer from (docs/guides/knowledge.md, What the Secretary reads): the settings first, which
 * take precedence, then each pushed text, newest first, fenced as information (docs/security.md, Partner text in the
 * Secretary's context). At most 16,000 characters of rendering in all: the text that crosses it loses the end of its
 * content, keeping its fence; those after it are left out and counted. `items`: the business's (`pushedItemRows`).
 */
export function secretaryKnowledge(business: Business, items: PushedItem[]) {
  const boundary = freshBoundary(
    ...items.flatMap(({ item, addedBy }) => [item.content, item.title, describeSource(addedBy)]),
  );
  const header = informationHeader("Information from a connected app", boundary);
  const settings = firstChars(settingsText(business), KNOWLEDGE_BUDGET_CHARS);
  const sections: KnowledgeSection[] = [{ kind: "settings", text: settings }];
  let room = KNOWLEDGE_BUDGET_CHARS - characterCount(settings);
  let omitted = 0;
  for (const { item, addedBy } of items) {
    const source = describeSource(addedBy);
    const labels = { Source: source, Title: item.title };
    const frame = frameLength(header, boundary, labels);
    if (room <= frame) {
      omitted++;
      continue;
    }
    const content = firstChars(item.content, room - frame);
    const text = fenceText(header, boundary, { labels, content });
    room -= characterCount(text);
    sections.push({ kind: "connected_app_information", key: item.key, title: item.title, source, content, text });
  }
  return { sections, boundary, chars: KNOWLEDGE_BUDGET_CHARS - room, omitted };
}
