import { fenceText, freshBoundary, informationHeader } from "../../lib/information-fence";
import type { Action } from "./action-object";

/**
 * An action's answer as the Secretary receives it (docs/security.md, Partner text in the Secretary's context): the
 * answer itself as its own value (`content`), and `text`, the same between two boundary lines whose token is drawn
 * for this call after the answer arrived (`boundary`), under a header saying it is information, with the action's
 * name and title inside the fence. No answer can close its fence or pass for the business's settings.
 */
export function fencedAnswer(action: Pick<Action, "name" | "title">, content: string) {
  const labels = { Action: action.name, Title: action.title };
  const boundary = freshBoundary(content, action.title);
  const header = informationHeader("The answer of a connected action the Secretary called", boundary);
  return { content, boundary, text: fenceText(header, boundary, { labels, content }) };
}
