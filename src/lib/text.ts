/** Characters as the spec counts them: code points, so "é" and "😀" are one each, whatever their UTF-8 size. */
export const characterCount = (text: string) => [...text].length;
