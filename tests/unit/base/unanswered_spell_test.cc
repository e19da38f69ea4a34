#include "base/unanswered_spell.h"

#include <gtest/gtest.h>

namespace nk {
namespace {

using namespace std::chrono_literals;
using Clock = UnansweredSpell::Clock;

TEST(UnansweredSpell, ASpellIsLongOnlyAfterQuietFor) {
  UnansweredSpell spell(5s);
  const Clock::time_point t0{};
  EXPECT_FALSE(spell.unanswered(t0));
  EXPECT_FALSE(spell.unanswered(t0 + 4999ms));
  EXPECT_TRUE(spell.unanswered(t0 + 5s));
  EXPECT_EQ(spell.seconds(t0 + 7s), 7);
}

TEST(UnansweredSpell, AnAnswerInBetweenStartsItAgain) {
  UnansweredSpell spell(5s);
  const Clock::time_point t0{};
  EXPECT_FALSE(spell.unanswered(t0));
  spell.answered();
  EXPECT_EQ(spell.length(t0 + 4s), Clock::duration::zero());
  // The spell begins at the first miss after the answer, not at the first ever.
  EXPECT_FALSE(spell.unanswered(t0 + 4s));
  EXPECT_FALSE(spell.unanswered(t0 + 8s));
  EXPECT_TRUE(spell.unanswered(t0 + 9s));
}

}  // namespace
}  // namespace nk
