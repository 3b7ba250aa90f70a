/** The vault path of the entry called `name` in the folder at `folder` ("/" is the root). */
export const childPath = (folder: string, name: string): string =>
  folder === '/' ? `/${name}` : `${folder}/${name}`;
