"""Errors raised by the CRAFT library."""


class CraftInputError(ValueError):
    """Invalid data, file or parameter given to the CRAFT library.

    The message always names the offending column, file or parameter and says
    what is wrong with it, so that an application can show it verbatim.
    """
