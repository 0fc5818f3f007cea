/** A file's text, as Vite's `?raw` suffix imports it: the docs pages that tests hold the service to. */
declare module "*?raw" {
  const text: string;
  export default text;
}
