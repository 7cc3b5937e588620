// A module an lcore cannot run: it exports no main.
export const notMain = 1;
