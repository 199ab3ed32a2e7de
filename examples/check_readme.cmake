cmake_minimum_required(VERSION 3.25)
# Checks that README.md contains SOURCE verbatim (inside a ```cpp block) and the golden OUTPUT
# verbatim (inside a ```text block), so the README's example compiles and prints what it says.
#   cmake -DREADME=<md> -DSOURCE=<cpp> -DOUTPUT=<txt> -P check_readme.cmake
file(READ "${README}" readme)
foreach(part SOURCE OUTPUT)
  file(READ "${${part}}" content)
  if(part STREQUAL "SOURCE")
    set(block "```cpp\n${content}```")
  else()
    set(block "```text\n${content}```")
  endif()
  string(FIND "${readme}" "${block}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "README.md does not contain ${${part}} verbatim in a fenced block; "
                        "copy the file's current content into README.md")
  endif()
endforeach()
