/*
 * random_engine.c: a Plyhall stdio engine in C that plays a random legal move, in any of the five games.
 *
 * It asks the driver for the legal moves ("option legal") and picks one, so it needs to know no rules.
 * The protocol is in docs/ENGINE-PROTOCOL.md. Build and run:
 *
 *     cc -O2 -o random-engine examples/engines/c/random_engine.c
 *     plyhall bot --game magnetic-cave --engine ./random-engine --name c-random
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LINE_MAX_CHARS 65536
#define MAX_MOVES 4096

static char line[LINE_MAX_CHARS];
static char *legal[MAX_MOVES];
static int n_legal = 0;

/* Reads the next line into `line`, without its newline; 0 at the end of input (the driver is gone). */
static int read_line(void) {
    if (!fgets(line, sizeof line, stdin)) return 0;
    line[strcspn(line, "\r\n")] = '\0';
    return 1;
}

static void skip_lines(int n) {
    while (n-- > 0 && read_line()) {
    }
}

static void clear_legal(void) {
    for (int i = 0; i < n_legal; i++) free(legal[i]);
    n_legal = 0;
}

/* Keeps the n moves that follow "legal n", one a line, exactly as the driver wrote them. */
static void read_legal(int n) {
    clear_legal();
    for (int i = 0; i < n && read_line(); i++) {
        if (n_legal < MAX_MOVES) legal[n_legal++] = strdup(line);
    }
}

static void play(void) {
    if (n_legal == 0) {
        printf("resign\n");
    } else {
        int pick = rand() % n_legal;
        printf("info %d legal moves, picked number %d\n", n_legal, pick + 1);
        printf("move %s\n", legal[pick]);
    }
    fflush(stdout);
}

int main(void) {
    srand((unsigned) time(NULL) ^ (unsigned) clock());
    int n;
    while (read_line()) {
        if (strncmp(line, "plyhall ", 8) == 0) {
            printf("id name random-c\nid author Plyhall examples\noption legal\nready\n");
            fflush(stdout);
        } else if (sscanf(line, "picture %d", &n) == 1 || sscanf(line, "moves %d", &n) == 1) {
            skip_lines(n); /* a random player needs neither the picture nor the moves so far */
        } else if (sscanf(line, "legal %d", &n) == 1) {
            read_legal(n);
        } else if (strcmp(line, "go") == 0) {
            play();
        } else if (strncmp(line, "illegal ", 8) == 0) {
            fprintf(stderr, "random-c: my move was refused: %s\n", line + 8);
        } else if (strncmp(line, "result ", 7) == 0) {
            fprintf(stderr, "random-c: game over: %s\n", line + 7);
        } else if (strcmp(line, "quit") == 0) {
            break;
        }
        /* anything else (newgame, position, state, time) is not needed here */
    }
    clear_legal();
    return 0;
}
