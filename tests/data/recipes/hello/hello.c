// Test payload: a static program that prints its arguments, its variant and a file from the data layer.
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  printf("hello from %s:", getenv("HELLO_VARIANT") ? getenv("HELLO_VARIANT") : "nowhere");
  for (int i = 1; i < argc; ++i) printf(" %s", argv[i]);
  printf("\n");
  FILE* greeting = fopen("/opt/hello/data/link-to-greeting", "r");
  if (greeting == NULL) {
    perror("/opt/hello/data/link-to-greeting");
    return 3;
  }
  char line[256];
  while (fgets(line, sizeof line, greeting) != NULL) fputs(line, stdout);
  fclose(greeting);
  return 0;
}
